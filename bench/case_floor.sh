#!/usr/bin/env bash
# The case service as deployed beside the bare Django + DRF floor, in one run, and the table.
#
#   bash bench/case_floor.sh /path/to/case-floor        # or CASE_FLOOR=/path/to/case-floor
#
# The case-floor harness (its run.sh, floor.py and wrk scripts) measures the floor and the project
# with the same client: POST /cases, then GET /cases/{id}. Here SERVE is exactly deploy/Procfile's
# case-web command (the README's production command) with its port replaced by the harness's. Then
# the same server is started again on the harness's database to measure GET /cases?limit=25, and
# read and create paced at half the project's saturating rate (p95 at half load), and creates spread
# over 8 case types in 4 tenants (bench/case_spread_setup.py makes them; compared with the floor's
# create). Needs wrk and the project's .venv; knobs: DUR (seconds per phase, 15), CONC (connections,
# 32), OUT (results folder), PORT (the second part's server, 8803).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
HARNESS=${1:-${CASE_FLOOR:?pass the case-floor harness folder (or set CASE_FLOOR)}}
HARNESS=$(cd "$HARNESS" && pwd)
export DUR=${DUR:-15} CONC=${CONC:-32} OUT=${OUT:-$ROOT/var/bench/case-floor}
export PATH=$ROOT/.venv/bin:$PATH CASE_ALLOWED_HOSTS=${CASE_ALLOWED_HOSTS:-127.0.0.1,localhost}
# Production settings need audit signing keys (an Ed25519 seed); this one is the benchmark's own.
export CASE_AUDIT_SIGNING_KEYS=${CASE_AUDIT_SIGNING_KEYS:-bench:YmVuY2gtb25seS1hdWRpdC1zaWduaW5nLXNlZWQtMzI=}
mkdir -p "$OUT"
# The harness serves the floor with gunicorn: the project's `bench` extra. Not installed from here:
# an editable install from a second checkout would repoint a shared .venv at that checkout.
"$ROOT/.venv/bin/python" -c 'import gunicorn' 2>/dev/null \
  || { echo "gunicorn is missing: install the project's bench extra (pip install -e '.[bench]')" >&2; exit 1; }
COMMAND=$(sed -n 's/^case-web: //p' "$ROOT/deploy/Procfile")
[[ "$COMMAND" == *"--port 8000"* ]] || { echo "deploy/Procfile's case-web line has no '--port 8000'"; exit 1; }
export SERVE=${COMMAND/--port 8000/--port \$PORT}
echo "SERVE: $SERVE"
cd "$ROOT"
bash "$HARNESS/run.sh" | tee "$OUT/harness.log"

# Second part: the same command again on the database the harness left, for list and paced phases.
PY=$ROOT/.venv/bin/python PORT=${PORT:-8803} PG=${PG:-postgres://postgres@127.0.0.1:5432}
# What autovacuum does for a table that has grown (statistics, the visibility map that lets the
# list's count read the index alone), done now: the server here may run with autovacuum off, and
# the harness's tables are minutes old. Printed, so a run shows whether the server had done it.
psql -qAt -h 127.0.0.1 -U postgres -d case_floor_project \
  -c "SELECT 'autovacuum=' || current_setting('autovacuum') || ', cases analyzed before: ' || (last_autoanalyze IS NOT NULL) FROM pg_stat_user_tables WHERE relname = 'cases_case'" \
  -c "VACUUM ANALYZE" | tee -a "$OUT/harness.log"
export DJANGO_SETTINGS_MODULE=casemgmt.config.settings.production CASE_DATABASE_URL=$PG/case_floor_project \
  CASE_REDIS_URL=${CASE_REDIS_URL:-redis://127.0.0.1:6379} CASE_SECRET_KEY=floor-secret-$(printf 'x%.0s' {1..40}) \
  CASE_FIELD_ENCRYPTION_KEYS=$($PY -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())') \
  CASE_SECURE_COOKIES=false CASE_LOG_LEVEL=WARNING PORT
# The spread create's 4 tenants, their Admins' tokens and 2 case types each (idempotent; through the
# services, with the server's settings): one "<token> <case type id>" line per case type.
export PAIRS=$OUT/spread-pairs
$PY "$ROOT/bench/case_spread_setup.py" >"$PAIRS"
(eval "exec setsid $SERVE" >"$OUT/project-server-2.log" 2>&1) &
SERVER=$!
stop() {
  kill -- -"$SERVER" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 -- -"$SERVER" 2>/dev/null || return 0; sleep 0.2; done
  echo "note: server ignored SIGTERM for 10 s; killed" >&2; kill -9 -- -"$SERVER" 2>/dev/null || true
}
trap stop EXIT
for _ in $(seq 300); do curl -fs -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.2; done
export TOKEN CASE_TYPE IDS=$OUT/ids-project CONNS=$CONC
TOKEN=$(curl -fsS -X POST "http://127.0.0.1:$PORT/auth/login" -H 'Content-Type: application/json' \
  -d '{"email": "floor@floor.test", "password": "Floor-passw0rd-not-secret!"}' | $PY -c 'import json,sys; print(json.load(sys.stdin)["token"])')
CASE_TYPE=$(psql -qAt -h 127.0.0.1 -U postgres -d case_floor_project \
  -c "SELECT t.id FROM cases_casetype t JOIN accounts_user u ON u.tenant_id = t.tenant_id WHERE u.email = 'floor@floor.test' LIMIT 1")
phase() {  # phase NAME KIND RATE
  PATH_KIND=$2 RATE=$3 wrk -t2 -c"$CONC" -d"${DUR}s" -s "$ROOT/bench/case_paced.lua" "http://127.0.0.1:$PORT" \
    | grep RESULT | sed "s/^/project $1 /" | tee -a "$OUT/results"
}
PATH_KIND=list RATE=0 wrk -t2 -c"$CONC" -d3s -s "$ROOT/bench/case_paced.lua" "http://127.0.0.1:$PORT" >/dev/null
phase list list 0
rate() { grep "^project $1 " "$OUT/results" | sed 's/.*rps=\([0-9.]*\).*/\1/' | head -1; }
phase read@half read "$(rate read | awk '{print $1 / 2}')"
phase create@half create "$(rate create | awk '{print $1 / 2}')"
# Spread create: each request the next of the 8 (token, case type) pairs made above, 2 case types
# in each of 4 tenants, so creates do not all queue on one counter row and one audit chain.
PATH_KIND=spread RATE=0 wrk -t2 -c"$CONC" -d3s -s "$ROOT/bench/case_paced.lua" "http://127.0.0.1:$PORT" >/dev/null
phase spread-create spread 0
stop
trap - EXIT
$PY "$ROOT/bench/case_floor_table.py" "$OUT/results"
