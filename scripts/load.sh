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
# redis://127.0.0.1:6379) name the services. SERVER_DB_PORT=N points the
# server (only: the script's own statements go to PGPORT, or 5432) at
# another port, a PgBouncer's in front of that PostgreSQL, say (README,
# "PgBouncer"); set UTTT_DB_PREPARED_STATEMENTS=false with it for
# transaction pooling. Everything runs on this machine, so the client, the
# server, PostgreSQL and Redis share its cores.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/server.sh
seconds=${1:-180}; games=${2:-64}
host=${PGHOST:-127.0.0.1}; user=${PGUSER:-postgres}; db=uttt_load
redis=${REDIS_URL:-redis://127.0.0.1:6379}
prefix="uttt-load-$$:"

# UTTT_BIN=FILE serves with that binary instead of this checkout's build, to
# compare two builds in turn on one machine.
if [ -n "${UTTT_BIN:-}" ]; then
  bin=$(cd "$OLDPWD" && realpath "$UTTT_BIN")
else
  bin=target/release/uttt
  cargo build --release --locked --quiet --bin uttt
fi
cargo bench --locked --no-run --quiet --bench load_moves 2>/dev/null
port=$(free_port)
data=$(mktemp -d)
# FORCE: a PgBouncer in front (SERVER_DB_PORT) keeps its server connections open.
psql -qX -h "$host" -U "$user" -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"

rss() { awk '/^VmRSS/ { printf "%.1f MiB", $2 / 1024 }' "/proc/$1/status"; }

# Limits raised only where the client itself would trip them: it signs up
# two players per game from one address, and its login clients log in
# every half second. The grace, because the client's players hold no event
# stream: in a run of 1,024 games, players idle through the sign-ups of the
# others (tens of seconds of Argon2) counted as dropped, and the CPU's moves
# for them made the client's next moves stale (UTTT_DROP_GRACE_MS overrides).
DATABASE_URL="postgres://$user@$host:${SERVER_DB_PORT:-${PGPORT:-5432}}/$db" REDIS_URL="$redis" UTTT_REDIS_PREFIX="$prefix" \
  UTTT_BIND="127.0.0.1:$port" UTTT_DATA_DIR="$data" UTTT_JWT_SECRET="load-test-secret-0123456789abcdef" \
  UTTT_DROP_GRACE_MS="${UTTT_DROP_GRACE_MS:-600000}" \
  UTTT_REGISTER_LIMIT_PER_ADDRESS=1000000 UTTT_LOGIN_LIMIT_PER_ADDRESS=1000000 \
  UTTT_LOGIN_LIMIT_PER_USERNAME=1000000 UTTT_ROOM_LOOKUPS_PER_ADDRESS=1000000 RUST_LOG=warn "$bin" serve >"$data/server.log" 2>&1 &
server=$!
cleanup() {
  kill "$server" 2>/dev/null; wait "$server" 2>/dev/null
  if [ -n "${SERVER_LOG:-}" ]; then cp "$data/server.log" "$SERVER_LOG"; fi
  redis-cli -u "$redis" --scan --pattern "$prefix*" | xargs -r redis-cli -u "$redis" del >/dev/null
  psql -qX -h "$host" -U "$user" -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"
  rm -rf "$data"
}
trap cleanup EXIT
base="http://127.0.0.1:$port"
wait_ready "$base" "$data/server.log"
sleep 5
echo "idle server RSS after start: $(rss "$server")"

redis_commands() { redis-cli -u "$redis" info stats | awk -F: '/^total_commands_processed:/ { print $2 + 0 }'; }
db_counts() {
  psql -qAtX -h "$host" -U "$user" -d postgres -F ' ' \
    -c "SELECT xact_commit, tup_inserted, tup_updated FROM pg_stat_database WHERE datname = '$db'"
}
commands_before=$(redis_commands)
counts_before=$(db_counts)
LOAD_URL="$base" LOAD_GAMES="$games" LOAD_SECS="$seconds" LOAD_PID="$server" LOAD_MIXED="${MIXED:-0}" LOAD_RATE="${RATE:-0}" LOAD_FLOOR="${FLOOR:-0}" \
  cargo bench --locked --quiet --bench load_moves | tee "$data/load.out"

# Streams and games of the run are over; give the workers a few rounds.
sleep 10
echo "idle server RSS 10 s after the load: $(rss "$server")"

# What the run asked of PostgreSQL and Redis per move, counted: less spread
# from run to run than moves/s. Sign-ups and the workers count too, and
# Redis's count is the whole server's (anything else using it meanwhile). A
# backend reports its statistics 10 s after it last did, if it went idle
# since (PostgreSQL 15's PGSTAT_IDLE_INTERVAL): read 11 s after the load.
moves=$(awk '/ moves in / { print $1 }' "$data/load.out")
if [ -n "$moves" ] && [ "$moves" -gt 0 ]; then
  sleep 1
  commands_after=$(redis_commands)
  read -r c0 i0 u0 <<<"$counts_before"
  read -r c1 i1 u1 <<<"$(db_counts)"
  if [ -n "$commands_before" ] && [ -n "$commands_after" ] && [ -n "$c0" ] && [ -n "$c1" ]; then
    awk -v m="$moves" -v c=$((c1 - c0)) -v i=$((i1 - i0)) -v u=$((u1 - u0)) \
      -v r=$((commands_after - commands_before)) 'BEGIN {
      printf "per move: %.3f PostgreSQL commits, %.3f rows inserted, %.3f rows updated, %.2f Redis commands\n",
        c / m, i / m, u / m, r / m }'
  else
    echo "per move: no counts (a statistics read failed)"
  fi
fi
if grep -q "panicked" "$data/server.log"; then
  echo "the server panicked:" >&2; grep -A5 panicked "$data/server.log" >&2; exit 1
fi
errors=$(grep -c ' ERROR ' "$data/server.log" || true)
echo "server log: $errors error lines"
