#!/usr/bin/env bash
# Moves against the database's limit (issue 18), in one run on this machine:
# pgbench's rate (scripts/pgbench/run.sh) for the move as the server sent it
# when the issue was filed (move.sql: five statements in one transaction)
# and as it sends it now: move-served.sql, a read, then one statement that
# writes the row and the move (a match whose row this instance does not
# remember), and move-remembered.sql, that statement alone (the row the
# match's last move wrote here, remembered), the server's saturating rate closed-loop
# (scripts/load.sh), then an open loop at half that rate. Prints the ratio
# of the server's rate to each pgbench rate and the open loop's latency,
# measured from each move's scheduled arrival. Last, the HTTP floor: the
# same client and server answering GET /healthz, which touches neither
# database nor broker (FLOOR=1 scripts/load.sh); with PostgreSQL's CPU per
# remembered move from pgbench it gives a ceiling: the rate on these cores
# of a move that cost only the floor plus its statement. A move's own HTTP
# handling (its body, its token, its answer) costs more than the floor.
#
# The strict comparison, the server's closed loop against
# move-remembered.sql, runs ROUNDS times (default 3), the two side by side
# in each round and in turn first (pgbench first in odd rounds, the server
# in even ones): this machine's speed drifts by 10-15 % within minutes
# (pgbench 8,914 then 10,155 tps four minutes apart), so one run of each,
# one after the other, compares two machines. Each round's ratio is
# printed, then their median; the open loop runs at half the median rate.
#
#   scripts/moves-vs-pgbench.sh [SECONDS] [CLIENTS] [OPEN_GAMES]   # default 30 s, 64, 256
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}; clients=${2:-64}; open_games=${3:-256}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

cargo build --release --locked --quiet --bin uttt
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
scripts/pgbench/run.sh "$clients" "$seconds" | tee "$out/pgbench"
tps=$(awk '/^tps = / { print $3; exit }' "$out/pgbench")
echo "load before pgbench of the served statements: $(cut -d' ' -f1-3 /proc/loadavg)"
scripts/pgbench/run.sh "$clients" "$seconds" scripts/pgbench/move-served.sql | tee "$out/pgbench-served"
served=$(awk '/^tps = / { print $3; exit }' "$out/pgbench-served")
rounds=${ROUNDS:-3}
if ! [ "$rounds" -ge 1 ] 2>/dev/null; then echo "ROUNDS must be a whole number from 1 on, not '$rounds'" >&2; exit 1; fi
remembered_pgbench() {
  echo "load before pgbench of the remembered move (round $1): $(cut -d' ' -f1-3 /proc/loadavg)"
  scripts/pgbench/run.sh "$clients" "$seconds" scripts/pgbench/move-remembered.sql | tee "$out/pgbench-remembered-$1"
}
closed_loop() {
  echo "load before the closed loop (round $1): $(cut -d' ' -f1-3 /proc/loadavg)"
  scripts/load.sh "$seconds" "$clients" | tee "$out/closed-$1"
}
for round in $(seq "$rounds"); do
  if [ $((round % 2)) = 1 ]; then remembered_pgbench "$round"; closed_loop "$round"
  else closed_loop "$round"; remembered_pgbench "$round"; fi
  tps_r=$(awk '/^tps = / { print $3; exit }' "$out/pgbench-remembered-$round")
  rate_r=$(sed -n 's/.* = \([0-9]*\) moves\/s.*/\1/p' "$out/closed-$round")
  # A round without both figures would make every ratio after it wrong.
  if [ -z "$rate_r" ] || [ -z "$tps_r" ]; then
    echo "round $round: no figure (server '$rate_r' moves/s, pgbench '$tps_r' tps)" >&2
    exit 1
  fi
  echo "$round $rate_r $tps_r" >> "$out/rounds"
done
# The median round by ratio (the middle one of an odd count, the lower
# middle of an even one): its server rate, pgbench rate and CPU figures
# stand for the run.
read -r _ median rate remembered < <(awk '{ print $2 / $3, $1, $2, $3 }' "$out/rounds" | sort -n | awk -v n="$rounds" 'NR == int((n + 1) / 2)')
cp "$out/pgbench-remembered-$median" "$out/pgbench-remembered"
cp "$out/closed-$median" "$out/closed"

half=$((rate / 2))
echo "load before the open loop: $(cut -d' ' -f1-3 /proc/loadavg)"
RATE=$half scripts/load.sh "$seconds" "$open_games" | tee "$out/open"
latency=$(sed -n 's/.*latency \(p50 [0-9.]* ms, p99 [0-9.]* ms\).*/\1/p' "$out/open")
echo "load before the floor: $(cut -d' ' -f1-3 /proc/loadavg)"
FLOOR=1 scripts/load.sh "$seconds" "$clients" | tee "$out/floor"
floor_ms=$(awk '/^floor CPU: / { print $4 + $8 }' "$out/floor")
db_ms=$(awk '/^postgres CPU: / { print $5 }' "$out/pgbench-remembered")
floor_failed=$(sed -n 's/^floor: .*; \([0-9]*\) failed$/\1/p' "$out/floor")
closed_ms=$(sed -n 's/^CPU in .*server [0-9.]* s (\([0-9.]*\) ms\/move).*load client [0-9.]* s (\([0-9.]*\) ms\/move).*/\1 \2/p' "$out/closed" | awk '{ print $1 + $2 }')
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
ratio() { awk -v r="$rate" -v t="$1" 'BEGIN { printf "%.2f", r / t }'; }
echo "rounds, the server's closed loop against pgbench move-remembered.sql side by side:"
while read -r round rate_r tps_r; do
  awk -v n="$round" -v r="$rate_r" -v t="$tps_r" 'BEGIN { printf "  round %d: %d moves/s against %.0f tps; ratio %.2f\n", n, r, t, r / t }'
done < "$out/rounds"
echo "HTTP closed loop, the median round ($median): $rate moves/s (target 0.6 of pgbench)"
echo "  pgbench move.sql (five statements, one transaction; before the rounds): $tps tps; ratio $(ratio "$tps")"
echo "  pgbench move-served.sql (the server's two statements, no row remembered; before the rounds): $served tps; ratio $(ratio "$served")"
echo "  pgbench move-remembered.sql (its one statement on a remembered row; the same round): $remembered tps; ratio $(ratio "$remembered")"
echo "open loop at $half moves/s (half the saturating rate): $latency (target p99 <= 20 ms)"
# A figure missing from its run's output, or a floor with failed requests,
# would make the ceiling a wrong number rather than an error: say so instead.
if [ -z "$floor_ms" ] || [ -z "$db_ms" ] || [ -z "$closed_ms" ] || [ "${floor_failed:-1}" != 0 ]; then
  echo "HTTP floor: no ceiling (floor CPU '$floor_ms', PostgreSQL CPU '$db_ms', move CPU '$closed_ms', failed floor requests '${floor_failed:-?}')" >&2
  exit 1
fi
awk -v f="$floor_ms" -v d="$db_ms" -v c="$closed_ms" -v r="$remembered" -v n="$(nproc)" 'BEGIN {
  ceiling = n * 1000 / (f + d)
  printf "HTTP floor: %.3f ms of server and client CPU a request (a move: %.3f); PostgreSQL %.3f ms a remembered move (pgbench)\n", f, c, d
  printf "  ceiling on %d cores for a move that costs the floor plus its statement: %.0f moves/s = %.2f of move-remembered.sql\n", n, ceiling, ceiling / r
}'
