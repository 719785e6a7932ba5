"""CPU profile of one case-service request, in process, through the WSGI application.

Calls the service's WSGI application directly (every middleware, authentication, permission check,
tenant scope, audit row; no network, no server), so the figures are the service's own CPU per
request, independent of the HTTP server and of other load on the machine:

    .venv/bin/python bench/case_profile.py   # read, list, create, create-workflow: 300 calls each
    .venv/bin/python bench/case_profile.py --calls 1000 --top 25 --only read
    .venv/bin/python bench/case_profile.py --only create --statements   # also list one call's SQL

It drops and recreates the database `case_profile` (or `$CASE_PROFILE_DB`) on postgres@127.0.0.1:5432 (production settings;
Redis from CASE_REDIS_URL, default 127.0.0.1:6379), creates a tenant, a case type and 200 cases, and a
second case type with a published workflow (`create-workflow` creates its cases), then per operation
prints the CPU time per call (process time) and in PostgreSQL's backends, the statements sent to PostgreSQL per call (each a
round trip) and cProfile's top functions by cumulative CPU time (thread time;
`CASE_PROFILE_SORT=tottime` sorts by own time).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchlib import CLAIM_SCHEMA

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SERVER = "postgres://postgres@127.0.0.1:5432"
# CASE_PROFILE_DB names another database, so that two profiles can run side by side.
DB = os.environ.get("CASE_PROFILE_DB", "case_profile")
SCHEMA = CLAIM_SCHEMA


def environment() -> dict[str, str]:
    from cryptography.fernet import Fernet

    return {
        "DJANGO_SETTINGS_MODULE": "casemgmt.config.settings.production",
        "CASE_DATABASE_URL": f"{SERVER}/{DB}",
        "CASE_REDIS_URL": os.environ.get("CASE_REDIS_URL", "redis://127.0.0.1:6379"),
        "CASE_SECRET_KEY": "profile-secret-" + "x" * 40,
        "CASE_FIELD_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
        "CASE_AUDIT_SIGNING_KEYS": "bench:YmVuY2gtb25seS1hdWRpdC1zaWduaW5nLXNlZWQtMzI=",  # Ed25519 seed, bench only
        "CASE_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "CASE_SECURE_COOKIES": "false",
        "CASE_LOG_LEVEL": "WARNING",
    }


def prepare(env: dict[str, str]) -> None:
    def psql(sql: str) -> None:
        subprocess.run(["psql", "-q", "-h", "127.0.0.1", "-U", "postgres", "-c", sql, "postgres"], check=True)

    psql(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
    psql(f"CREATE DATABASE {DB}")
    manage = [sys.executable, "manage_case.py"]
    full = dict(os.environ, **env)
    subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=full, check=True)
    subprocess.run(
        [*manage, "create_tenant", "--name", "Profile", "--admin-email", "p@profile.test",
         "--admin-password", "Profile-passw0rd-not-secret!"],
        cwd=ROOT, env=full, check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip


class Caller:
    """Calls the WSGI application the way a server would, with a bearer token."""

    def __init__(self, app: Any, token: str = "") -> None:
        self.app = app
        self.token = token

    def __call__(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        raw = json.dumps(body).encode() if body is not None else b""
        query = ""
        if "?" in path:
            path, query = path.split("?", 1)
        environ = {
            "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query, "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000", "SERVER_PROTOCOL": "HTTP/1.1", "HTTP_HOST": "127.0.0.1",
            "REMOTE_ADDR": "127.0.0.1", "wsgi.input": io.BytesIO(raw), "wsgi.url_scheme": "http",
            "wsgi.errors": sys.stderr, "wsgi.multithread": True, "wsgi.multiprocess": True,
            "wsgi.run_once": False, "wsgi.version": (1, 0), "CONTENT_LENGTH": str(len(raw)),
            "CONTENT_TYPE": "application/json",
        }  # fmt: skip
        if self.token:
            environ["HTTP_AUTHORIZATION"] = f"Bearer {self.token}"
        status: list[str] = []
        chunks = self.app(environ, lambda s, h, exc=None: status.append(s))
        content = b"".join(chunks)
        if hasattr(chunks, "close"):
            chunks.close()
        return int(status[0].split()[0]), json.loads(content) if content else None


class RoundTrips:
    """Counts statements sent to PostgreSQL (each one round trip), at psycopg's level, so statements
    that bypass Django's cursor wrapper (a connection check, a pool's rollback) count too."""

    def __init__(self) -> None:
        import psycopg

        self.cursor_class = psycopg.Cursor
        self.statements: list[str] = []

    def __enter__(self) -> RoundTrips:
        original = self.cursor_class.execute
        statements = self.statements

        def execute(cursor: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
            statements.append(query if isinstance(query, str) else repr(query))
            return original(cursor, query, *args, **kwargs)

        self.original = original
        self.cursor_class.execute = execute  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        self.cursor_class.execute = self.original  # type: ignore[method-assign]


class BackendCpu:
    """CPU time of the PostgreSQL backends serving this database (from /proc, this machine's
    server), read through a connection of its own that it leaves out: what the statements cost the
    database, which the process time above does not include."""

    def __init__(self) -> None:
        import psycopg

        self.conn = psycopg.connect(f"postgresql://postgres@127.0.0.1:5432/{DB}", autocommit=True)

    def seconds(self) -> float:
        own = self.conn.info.backend_pid
        total = 0
        for (pid,) in self.conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> %s", [own]
        ):
            try:
                with open(f"/proc/{pid}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:  # a backend that ended between the query and the read
                continue
            total += int(fields[11]) + int(fields[12])
        return total / os.sysconf("SC_CLK_TCK")


def measure(name: str, call: Any, calls: int, top: int, show_statements: bool = False) -> float:
    for _ in range(20):  # warm-up: caches, connection pool, lazy imports
        call()
    backends = BackendCpu()
    started, backend_started = time.process_time(), backends.seconds()
    for _ in range(calls):
        call()
    per_call = (time.process_time() - started) / calls * 1000
    backend_per_call = (backends.seconds() - backend_started) / calls * 1000
    # CPU time of this thread, not wall time: waits on PostgreSQL would otherwise dominate the list
    # while costing the service nothing.
    profiler = cProfile.Profile(time.thread_time)
    profiler.enable()
    for _ in range(calls):
        call()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats(
        os.environ.get("CASE_PROFILE_SORT", "cumulative")
    ).print_stats(top)
    with RoundTrips() as trips:
        for _ in range(calls):
            call()
    print(f"== {name}: {per_call:.2f} ms CPU per call (process time, {calls} calls, no profiler)")
    print(f"   {backend_per_call:.2f} ms CPU per call in PostgreSQL's backends")
    print(f"   {len(trips.statements) / calls:.2f} statements (round trips) per call")
    if show_statements:
        with RoundTrips() as one:
            call()
        for statement in one.statements:
            print(f"     {' '.join(statement.split())[:150]}")
    print(out.getvalue())
    return per_call


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--only", choices=["read", "list", "create", "create-workflow"], action="append")
    parser.add_argument("--statements", action="store_true", help="print one call's SQL statements")
    args = parser.parse_args()
    env = environment()
    prepare(env)
    os.environ.update(env)
    import django

    django.setup()
    from django.core.wsgi import get_wsgi_application

    app = get_wsgi_application()
    status, login = Caller(app)(
        "POST", "/auth/login", {"email": "p@profile.test", "password": "Profile-passw0rd-not-secret!"}
    )
    assert status == 200, login
    call = Caller(app, login["token"])
    status, case_type = call(
        "POST", "/case-types", {"key": "claim", "displayName": "Claim", "schema": SCHEMA}
    )
    assert status == 201, case_type
    counter = iter(range(10**9))

    def create() -> None:
        n = next(counter)
        data = {"applicant": {"name": f"Ann {n}"}, "amount": n % 900, "description": "water damage kitchen"}
        status, body = call("POST", "/cases", {"caseTypeId": case_type["id"], "data": data})
        assert status == 201, body

    # A second case type whose default published workflow starts with a task (its second step waits):
    # a create there also writes the steps, activates the first and broadcasts it after commit.
    status, permit = call("POST", "/case-types", {"key": "permit", "displayName": "Permit", "schema": SCHEMA})
    assert status == 201, permit
    steps = [
        {"id": "review", "name": "Review", "type": "task"},
        {"id": "decide", "name": "Decide", "type": "task", "dependsOn": ["review"]},
    ]
    status, workflow = call("POST", "/workflows", {"caseTypeKey": "permit", "name": "Permit", "steps": steps})
    assert status == 201, workflow
    status, body = call("POST", f"/workflows/{workflow['id']}/publish")
    assert status == 200, body

    def create_with_workflow() -> None:
        n = next(counter)
        data = {"applicant": {"name": f"Ann {n}"}, "amount": n % 900}
        status, body = call("POST", "/cases", {"caseTypeId": permit["id"], "data": data})
        assert status == 201 and body["workflowVersionId"] == workflow["id"], body

    ids = []
    for _ in range(200):
        n = next(counter)
        data = {"applicant": {"name": f"Ann {n}"}, "amount": n % 900}
        ids.append(call("POST", "/cases", {"caseTypeId": case_type["id"], "data": data})[1]["id"])

    def read() -> None:
        status, body = call("GET", f"/cases/{ids[next(counter) % len(ids)]}")
        assert status == 200, body

    def listing() -> None:
        status, body = call("GET", "/cases?limit=25")
        assert status == 200, body

    chosen = args.only or ["read", "list", "create", "create-workflow"]
    results = {}
    operations = (
        ("read", read),
        ("list", listing),
        ("create", create),
        ("create-workflow", create_with_workflow),
    )
    for name, fn in operations:
        if name in chosen:
            results[name] = measure(name, fn, args.calls, args.top, args.statements)
    print("CPU per call: " + ", ".join(f"{k} {v:.2f} ms" for k, v in results.items()))


if __name__ == "__main__":
    main()
