#!/usr/bin/env bash
# Hostile input: runs schemathesis (PyPI) against openapi/openapi.json and a
# running `uttt serve`, authenticated as a fresh player, and fails on any server
# error or response that breaks the spec.
#
#   scripts/schemathesis.sh [SECONDS]      # default 300
#
# Starts its own server on a free port with a throw-away SQLite data dir, or on
# DATABASE_URL / REDIS_URL when those are set. Needs `pip install schemathesis`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/server.sh
seconds=${1:-300}
command -v schemathesis >/dev/null || { echo "schemathesis is not installed: pip install schemathesis" >&2; exit 2; }

cargo build --release --locked --quiet
port=$(free_port)
data=$(mktemp -d)
log="$data/server.log"
# Generous rate limits: the fuzzer registers, logs in and looks rooms up far
# more than a person would (the per-player caps stay at their defaults: their
# 409s are documented answers too). The access token lives two hours, so it
# outlasts the run.
UTTT_BIND="127.0.0.1:$port" UTTT_DATA_DIR="$data" UTTT_JWT_SECRET="schemathesis-secret-0123456789abcdef" \
  UTTT_ACCESS_TOKEN_TTL_SECS=7200 UTTT_REGISTER_LIMIT_PER_ADDRESS=1000000 \
  UTTT_LOGIN_LIMIT_PER_ADDRESS=1000000 UTTT_LOGIN_LIMIT_PER_USERNAME=1000000 \
  UTTT_LOGIN_CEILING_PER_USERNAME=1000000 UTTT_ROOM_LOOKUPS_PER_PLAYER=1000000 \
  UTTT_ROOM_LOOKUPS_PER_ADDRESS=1000000 \
  RUST_LOG=warn target/release/uttt serve >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$data"' EXIT
base="http://127.0.0.1:$port"
wait_ready "$base" "$log"

# An admin, so the admin endpoints are exercised too (the role is in the token: log in after promoting).
account='{"username":"schemathesis","password":"a long fuzzing password"}'
curl -fs -X POST "$base/api/v1/auth/register" -H 'content-type: application/json' -d "$account" >/dev/null
UTTT_DATA_DIR="$data" target/release/uttt admin promote schemathesis >/dev/null
token=$(curl -fs -X POST "$base/api/v1/auth/login" -H 'content-type: application/json' -d "$account" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
# Something to find: a practice match and a room, so ids in paths can hit real rows.
curl -fs -X POST "$base/api/v1/matches" -H "authorization: Bearer $token" -H 'content-type: application/json' \
  -d '{"opponent":"cpu","depth":2,"time_control":{"kind":"none"},"cpu_level":1}' >/dev/null

status=0
schemathesis run openapi/openapi.json --url "$base" \
  --header "Authorization: Bearer $token" \
  --checks all --exclude-checks positive_data_acceptance \
  --max-time "$seconds" --workers 2 \
  --report junit --report-dir target/schemathesis || status=$?
if grep -q "panicked" "$log"; then
  echo "the server panicked:" >&2; grep -A5 panicked "$log" >&2; status=1
fi
exit $status
