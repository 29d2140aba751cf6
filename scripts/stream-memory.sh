#!/usr/bin/env bash
# Memory per open event stream: a release server (embedded default, throw-away
# data folder) gets N streams (default 2000) on one match, opened 100 at a
# time by one player; prints its RSS before and after, and the cost per stream.
#
#   scripts/stream-memory.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/server.sh
streams=${1:-2000}
cargo build --release --locked --quiet --bin uttt
port=$(free_port)
data=$(mktemp -d)
# One player holds every stream: lift the per-player stream cap.
UTTT_BIND="127.0.0.1:$port" UTTT_DATA_DIR="$data" UTTT_STREAMS_PER_PLAYER=1000000 \
  RUST_LOG=warn target/release/uttt serve >"$data/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$data"' EXIT
wait_ready "http://127.0.0.1:$port" "$data/server.log"

python3 - "$port" "$server" "$streams" <<'PY'
import asyncio, json, sys, urllib.request

port, pid, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
base = f"http://127.0.0.1:{port}"

def post(path, body, token=None):
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = "Bearer " + token
    req = urllib.request.Request(base + path, json.dumps(body).encode(), headers, method="POST")
    return json.load(urllib.request.urlopen(req))

def rss_mib():
    with open(f"/proc/{pid}/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith("VmRSS")) / 1024

token = post("/api/v1/auth/register", {"username": "streamer", "password": "a long password"})["access_token"]
match = post("/api/v1/matches", {"opponent": "cpu", "depth": 2, "time_control": {"kind": "none"}, "cpu_level": 1}, token)["id"]

async def stream():
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET /api/v1/matches/{match}/events HTTP/1.1\r\nHost: x\r\n"
                 f"Authorization: Bearer {token}\r\n\r\n".encode())
    await reader.readuntil(b"event: state")  # the stream is live
    return reader, writer

async def main():
    await asyncio.sleep(1)
    before = rss_mib()
    held = []
    for _ in range(0, n, 100):
        held += await asyncio.gather(*(stream() for _ in range(min(100, n - len(held)))))
    await asyncio.sleep(3)
    after = rss_mib()
    print(f"{len(held)} open streams: server RSS {before:.1f} -> {after:.1f} MiB, "
          f"{(after - before) * 1024 / len(held):.1f} KiB per stream")

asyncio.run(main())
PY
