#!/usr/bin/env bash
# deploy/nginx.conf in front of two case webs and two orchestrator webs (each deploy/Procfile's
# command on its own port), beside one case web alone, on the database the case-floor harness left
# (run `bash bench/case_floor.sh <harness>` first) and the orchestrator benchmark's (`orch_bench`).
#
#   bash bench/nginx_pair.sh
#
# Prints, for GET /cases/{id} and POST /cases with wrk (32 connections, DUR seconds each): the
# single Procfile case web (port 8803) and the pair through nginx (port 8080); then checks a
# WebSocket ping through nginx and an orchestrator /api/health through it. Needs nginx and wrk
# (Debian: apt-get install -y nginx wrk). On one machine the pair shares the same cores as the
# single web: the figure shows what the proxy costs, not what a second machine adds.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export PATH=$ROOT/.venv/bin:$PATH DUR=${DUR:-10} CONC=${CONC:-32}
PY=$ROOT/.venv/bin/python PG=${PG:-postgres://postgres@127.0.0.1:5432}
OUT=${OUT:-$ROOT/var/bench/nginx-pair}
rm -rf "$OUT" && mkdir -p "$OUT"
export DJANGO_SETTINGS_MODULE=casemgmt.config.settings.production CASE_DATABASE_URL=$PG/case_floor_project \
  CASE_REDIS_URL=${CASE_REDIS_URL:-redis://127.0.0.1:6379} CASE_SECRET_KEY=floor-secret-$(printf 'x%.0s' {1..40}) \
  CASE_FIELD_ENCRYPTION_KEYS=$($PY -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())') \
  CASE_AUDIT_SIGNING_KEYS=bench:YmVuY2gtb25seS1hdWRpdC1zaWduaW5nLXNlZWQtMzI= \
  CASE_ALLOWED_HOSTS=127.0.0.1,localhost CASE_SECURE_COOKIES=false CASE_LOG_LEVEL=WARNING \
  CASE_TRUSTED_PROXIES=127.0.0.1
ORCH_ENV=(DJANGO_SETTINGS_MODULE=orchestrator.config.settings.production ORCH_DATABASE_URL=$PG/orch_bench
  ORCH_REDIS_URL=redis://127.0.0.1:6379 ORCH_SECRET_KEY=orch-bench-secret-key-not-for-production
  ORCH_FIELD_ENCRYPTION_KEYS=dGVzdC1vbmx5LWZlcm5ldC1rZXktMzItYnl0ZXMtISE=
  ORCH_AUDIT_SIGNING_KEYS=bench:YmVuY2gtb25seS1hdWRpdC1zaWduaW5nLXNlZWQtMzI= ORCH_ALLOWED_HOSTS=127.0.0.1,localhost
  ORCH_SECURE_COOKIES=false ORCH_LOG_LEVEL=WARNING ORCH_TRUSTED_PROXIES=127.0.0.1)
CASE_CMD=$(sed -n 's/^case-web: //p' deploy/Procfile)
ORCH_CMD=$(sed -n 's/^orch-web: //p' deploy/Procfile | sed 's/\${ORCH_PORT:-3000}/8000/; s/\${ORCH_DB_POOL_MAX_SIZE:-8}/8/')
$PY manage_case.py migrate -v0  # the harness's database, brought to this code's schema
env "${ORCH_ENV[@]}" $PY manage_orch.py migrate -v0
PIDS=()
start() {  # start NAME PORT COMMAND [env...]
  local name=$1 port=$2 cmd=$3; shift 3
  (exec setsid env "$@" bash -c "exec env ${cmd/--port 8000/--port $port}") >"$OUT/$name.log" 2>&1 &
  PIDS+=($!)
}
stop() {
  for pid in "${PIDS[@]}"; do kill -- -"$pid" 2>/dev/null || true; done
  [ -f "$OUT/nginx/nginx.pid" ] && kill "$(cat "$OUT/nginx/nginx.pid")" 2>/dev/null || true
}
trap stop EXIT
wait_up() { for _ in $(seq 300); do curl -fs -o /dev/null "$1" && return 0; sleep 0.2; done; echo "$1 not up"; exit 1; }
start case-single 8803 "$CASE_CMD"
start case-a 8101 "$CASE_CMD"
start case-b 8102 "$CASE_CMD"
start orch-a 3101 "$ORCH_CMD" "${ORCH_ENV[@]}"
start orch-b 3102 "$ORCH_CMD" "${ORCH_ENV[@]}"
mkdir -p "$OUT/nginx"
nginx -c "$ROOT/deploy/nginx.conf" -p "$OUT/nginx/" -g "daemon on;"
for url in 127.0.0.1:8803/healthz 127.0.0.1:8101/healthz 127.0.0.1:8102/healthz 127.0.0.1:8080/healthz \
           127.0.0.1:3101/api/health 127.0.0.1:3102/api/health; do wait_up "http://$url"; done
export TOKEN CASE_TYPE IDS=$OUT/ids CONNS=$CONC
TOKEN=$(curl -fsS -X POST http://127.0.0.1:8080/auth/login -H 'Content-Type: application/json' \
  -d '{"email": "floor@floor.test", "password": "Floor-passw0rd-not-secret!"}' | $PY -c 'import json,sys; print(json.load(sys.stdin)["token"])')
CASE_TYPE=$(psql -qAt -h 127.0.0.1 -U postgres -d case_floor_project \
  -c "SELECT t.id FROM cases_casetype t JOIN accounts_user u ON u.tenant_id = t.tenant_id WHERE u.email = 'floor@floor.test' LIMIT 1")
psql -qAt -h 127.0.0.1 -U postgres -d case_floor_project \
  -c "SELECT id FROM cases_case WHERE case_type_id = '$CASE_TYPE' ORDER BY random() LIMIT 2000" >"$IDS"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for kind in read create; do
  for target in single:8803 nginx-pair:8080; do
    PATH_KIND=$kind RATE=0 wrk -t2 -c"$CONC" -d"${DUR}s" -s bench/case_paced.lua "http://127.0.0.1:${target#*:}" \
      | grep RESULT | sed "s/^/${target%%:*} $kind /"
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
$PY - "$TOKEN" <<'EOF'
import asyncio, json, sys
import websockets
async def ping():
    async with websockets.connect(f"ws://127.0.0.1:8080/ws?token={sys.argv[1]}", open_timeout=10) as ws:
        await ws.send(json.dumps({"type": "ping"}))
        return json.loads(await asyncio.wait_for(ws.recv(), 10))
print("WebSocket through nginx:", asyncio.run(ping()))
EOF
echo "orchestrator through nginx: $(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:3080/api/health)"
