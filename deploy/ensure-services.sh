#!/usr/bin/env bash
# Starts PostgreSQL and Redis for the tests when they are installed here but not running.
# Targets come from TEST_PG_HOST/TEST_PG_PORT and TEST_REDIS_HOST/TEST_REDIS_PORT (defaults: 127.0.0.1).
set -uo pipefail
PG_HOST=${TEST_PG_HOST:-127.0.0.1}
PG_PORT=${TEST_PG_PORT:-5432}
REDIS_HOST=${TEST_REDIS_HOST:-127.0.0.1}
REDIS_PORT=${TEST_REDIS_PORT:-6379}

wait_until() {  # wait_until <seconds> <command...>
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -ge $deadline ] && return 1
    sleep 0.5
  done
}

pg_up() { pg_isready -q -h "$PG_HOST" -p "$PG_PORT"; }
redis_up() {
  if command -v redis-cli >/dev/null; then redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" ping | grep -q PONG
  else (exec 3<>"/dev/tcp/$REDIS_HOST/$REDIS_PORT") 2>/dev/null; fi
}

# The vault types uploads from their bytes with libmagic (python-magic loads it at import).
if ! ldconfig -p 2>/dev/null | grep -q 'libmagic\.so\.1' && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "Installing libmagic..."
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libmagic1 >/dev/null
fi

# The backup and restore commands (and their tests) run pg_dump, pg_restore and psql.
# The PDF connector lays out HTML with WeasyPrint, which loads Pango (and HarfBuzz) at import.
if ! ldconfig -p 2>/dev/null | grep -q 'libpango-1\.0\.so\.0' && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "Installing Pango for WeasyPrint..."
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libpango-1.0-0 libpangoft2-1.0-0 \
    libharfbuzz0b fonts-dejavu-core >/dev/null
fi

if ! command -v pg_dump >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "Installing the PostgreSQL client tools..."
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-client >/dev/null
fi

# The fault-injection tests run a private PostgreSQL cluster (initdb) and network namespaces (ip).
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "Installing the PostgreSQL server binaries..."
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
if ! command -v ip >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 >/dev/null
fi

if ! pg_up; then
  if command -v pg_ctlcluster >/dev/null && ls /etc/postgresql >/dev/null 2>&1; then
    echo "Starting PostgreSQL..."
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -n1)" main start || true
  elif command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "Installing PostgreSQL..."
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -n1)" main start || true
  fi
  wait_until 60 pg_up || { echo "PostgreSQL is not reachable on $PG_HOST:$PG_PORT" >&2; exit 1; }
fi

if ! redis_up; then
  if ! command -v redis-server >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "Installing Redis..."
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  fi
  if command -v redis-server >/dev/null; then
    echo "Starting Redis..."
    mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$REDIS_PORT" --save "" --appendonly no \
      --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
  fi
  wait_until 30 redis_up || { echo "Redis is not reachable on $REDIS_HOST:$REDIS_PORT" >&2; exit 1; }
fi
echo "PostgreSQL $PG_HOST:$PG_PORT and Redis $REDIS_HOST:$REDIS_PORT are up."
