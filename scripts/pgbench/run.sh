#!/usr/bin/env bash
# The database's ceiling for moves: pgbench running the move transaction
# (move.sql) with CLIENTS clients (default 64) for SECONDS (default 30) on a
# fresh database migrated by uttt. Compare with `cargo bench --bench load_moves`
# (LOAD_GAMES = CLIENTS) against a server on the same PostgreSQL.
#   scripts/pgbench/run.sh [CLIENTS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
clients=${1:-64}; seconds=${2:-30}
host=${PGHOST:-127.0.0.1}; user=${PGUSER:-postgres}; db=uttt_pgbench
psql -qX -h "$host" -U "$user" -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
DATABASE_URL="postgres://$user@$host:5432/$db" target/release/uttt migrate >/dev/null
psql -qX -h "$host" -U "$user" -d "$db" -f scripts/pgbench/setup.sql
pgbench -n -h "$host" -U "$user" -c "$clients" -j 2 -T "$seconds" -M prepared -f scripts/pgbench/move.sql "$db"
psql -qX -h "$host" -U "$user" -d postgres -c "DROP DATABASE $db"
