#!/usr/bin/env bash
# The database's ceiling for moves: pgbench running the move transaction
# (move.sql, or SCRIPT) with CLIENTS clients (default 64) for SECONDS
# (default 30) on a fresh database migrated by uttt, then PostgreSQL's CPU
# per transaction (every `postgres` process, as benches/load_moves.rs counts
# it for the server's moves). Compare with `cargo bench --bench load_moves`
# (LOAD_GAMES = CLIENTS) against a server on the same PostgreSQL.
#   scripts/pgbench/run.sh [CLIENTS] [SECONDS] [SCRIPT]
#   scripts/pgbench/run.sh 64 30 scripts/pgbench/move-served.sql   # the server's two statements, no row remembered
#   scripts/pgbench/run.sh 64 30 scripts/pgbench/move-remembered.sql   # its one statement on a remembered row
#   scripts/pgbench/run.sh 64 30 scripts/pgbench/move-pipelined.sql   # move.sql's statements in three round trips
set -euo pipefail
cd "$(dirname "$0")/../.."
clients=${1:-64}; seconds=${2:-30}; script=${3:-scripts/pgbench/move.sql}
host=${PGHOST:-127.0.0.1}; user=${PGUSER:-postgres}; db=uttt_pgbench
out=$(mktemp)
trap 'rm -f "$out"' EXIT
psql -qX -h "$host" -U "$user" -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
DATABASE_URL="postgres://$user@$host:5432/$db" target/release/uttt migrate >/dev/null
psql -qX -h "$host" -U "$user" -d "$db" -f scripts/pgbench/setup.sql

# CPU ticks (user, system, and of reaped children) of every process named postgres.
postgres_ticks() {
  # A process may end between the glob and its read: cat then fails, harmlessly.
  { cat /proc/[0-9]*/stat 2>/dev/null || true; } |
    awk '{ i = index($0, ") "); if (substr($0, 1, i) !~ /\(postgres\)$/) next
           split(substr($0, i + 2), f, " "); t += f[12] + f[13] + f[14] + f[15] } END { print t + 0 }'
}
before=$(postgres_ticks)
# Every client starts with :version 0 (move-remembered.sql reads its row
# only then; the other scripts set it from their read).
pgbench -n -h "$host" -U "$user" -c "$clients" -j 2 -T "$seconds" -M prepared -D version=0 -f "$script" "$db" | tee "$out"
after=$(postgres_ticks)
done_tx=$(awk '/number of transactions actually processed/ { split($NF, a, "/"); print a[1] }' "$out")
awk -v t=$((after - before)) -v n="$done_tx" -v hz="$(getconf CLK_TCK)" \
  'BEGIN { printf "postgres CPU: %.1f s, %.3f ms per transaction\n", t / hz, t / hz * 1000 / n }'
psql -qX -h "$host" -U "$user" -d postgres -c "DROP DATABASE $db"
