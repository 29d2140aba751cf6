#!/usr/bin/env bash
# Load: a release server on PostgreSQL and Redis (a fresh database and key
# prefix), its idle memory, then sustained traffic from benches/load_moves.rs
# (moves; with MIXED=1 also event streams, logins and ranked queueing) with
# the server's memory sampled every second, then its idle memory again.
#
#   scripts/load.sh [SECONDS] [GAMES]     # default 180 s, 64 games; MIXED=1 for mixed traffic
#
# RATE=N makes the moves an open loop at N moves/s (see benches/load_moves.rs).
# FLOOR=1 sends no moves: GET /healthz in the same closed loop, the HTTP floor
# under a move's cost (scripts/moves-vs-pgbench.sh).
# SERVER_LOG=FILE keeps the server's log there (slow moves and slow database
# calls are logged with where their time went).
# UTTT_BIN=FILE serves with that binary (see below). After a run of moves,
# PostgreSQL's commits and rows written and Redis's commands are printed
# per move.
#
# PGHOST/PGUSER (default 127.0.0.1/postgres) and REDIS_URL (default
# redis://127.0.0.1:6379) name the services. Everything runs on this machine,
# so the client, the server, PostgreSQL and Redis share its cores.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/server.sh
seconds=${1:-180}; games=${2:-64}
host=${PGHOST:-127.0.0.1}; user=${PGUSER:-postgres}; db=uttt_load
redis=${REDIS_URL:-redis://127.0.0.1:6379}
prefix="uttt-load-$$:"

# UTTT_BIN=FILE serves with that binary instead of this checkout's build, to
# compare two builds in turn on one machine.
bin=${UTTT_BIN:-target/release/uttt}
[ -n "${UTTT_BIN:-}" ] || cargo build --release --locked --quiet --bin uttt
cargo bench --locked --no-run --quiet --bench load_moves 2>/dev/null
port=$(free_port)
data=$(mktemp -d)
psql -qX -h "$host" -U "$user" -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"

rss() { awk '/^VmRSS/ { printf "%.1f MiB", $2 / 1024 }' "/proc/$1/status"; }

# Limits raised only where the client itself would trip them: it signs up
# two players per game from one address, and its login clients log in
# every half second. The grace, because the client's players hold no event
# stream: in a run of 1,024 games, players idle through the sign-ups of the
# others (tens of seconds of Argon2) counted as dropped, and the CPU's moves
# for them made the client's next moves stale (UTTT_DROP_GRACE_MS overrides).
DATABASE_URL="postgres://$user@$host:5432/$db" REDIS_URL="$redis" UTTT_REDIS_PREFIX="$prefix" \
  UTTT_BIND="127.0.0.1:$port" UTTT_DATA_DIR="$data" UTTT_JWT_SECRET="load-test-secret-0123456789abcdef" \
  UTTT_DROP_GRACE_MS="${UTTT_DROP_GRACE_MS:-600000}" \
  UTTT_REGISTER_LIMIT_PER_ADDRESS=1000000 UTTT_LOGIN_LIMIT_PER_ADDRESS=1000000 \
  UTTT_LOGIN_LIMIT_PER_USERNAME=1000000 UTTT_ROOM_LOOKUPS_PER_ADDRESS=1000000 RUST_LOG=warn "$bin" serve >"$data/server.log" 2>&1 &
server=$!
cleanup() {
  kill "$server" 2>/dev/null; wait "$server" 2>/dev/null
  if [ -n "${SERVER_LOG:-}" ]; then cp "$data/server.log" "$SERVER_LOG"; fi
  redis-cli -u "$redis" --scan --pattern "$prefix*" | xargs -r redis-cli -u "$redis" del >/dev/null
  psql -qX -h "$host" -U "$user" -d postgres -c "DROP DATABASE IF EXISTS $db"
  rm -rf "$data"
}
trap cleanup EXIT
base="http://127.0.0.1:$port"
wait_ready "$base" "$data/server.log"
sleep 5
echo "idle server RSS after start: $(rss "$server")"

redis_commands() { redis-cli -u "$redis" info stats | awk -F: '/^total_commands_processed:/ { print $2 + 0 }'; }
commands_before=$(redis_commands)
LOAD_URL="$base" LOAD_GAMES="$games" LOAD_SECS="$seconds" LOAD_PID="$server" LOAD_MIXED="${MIXED:-0}" LOAD_RATE="${RATE:-0}" LOAD_FLOOR="${FLOOR:-0}" \
  cargo bench --locked --quiet --bench load_moves | tee "$data/load.out"

# What the run asked of PostgreSQL and Redis per move, counted: these do not
# spread from run to run as moves/s does on a shared machine. (Sign-ups and
# the workers are counted too.) Backends report their statistics within a
# second of going idle.
moves=$(awk '/ moves in / { print $1 }' "$data/load.out")
if [ -n "$moves" ] && [ "$moves" -gt 0 ]; then
  sleep 2
  commands=$(( $(redis_commands) - commands_before ))
  psql -qAtX -h "$host" -U "$user" -d postgres -c "
    SELECT format('per move: %s PostgreSQL commits, %s rows inserted, %s rows updated, %s Redis commands',
                  round(xact_commit / $moves.0, 3), round(tup_inserted / $moves.0, 3),
                  round(tup_updated / $moves.0, 3), round($commands / $moves.0, 2))
    FROM pg_stat_database WHERE datname = '$db'"
fi

# Streams and games of the run are over; give the workers a few rounds.
sleep 10
echo "idle server RSS 10 s after the load: $(rss "$server")"
if grep -q "panicked" "$data/server.log"; then
  echo "the server panicked:" >&2; grep -A5 panicked "$data/server.log" >&2; exit 1
fi
errors=$(grep -c ' ERROR ' "$data/server.log" || true)
echo "server log: $errors error lines"
