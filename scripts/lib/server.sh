# Shared by the scripts that start their own `uttt serve`: source it.

# A free TCP port on 127.0.0.1.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Waits up to 10 s for BASE/readyz to answer 200; otherwise prints LOG and fails.
wait_ready() {
  local base=$1 log=$2
  for _ in $(seq 100); do curl -fs "$base/readyz" >/dev/null && return 0; sleep 0.1; done
  echo "the server did not become ready:" >&2
  cat "$log" >&2
  return 1
}
