"""CPU cost of scheduling, graphing and cancelling one large DAG, in process, independent of load.

The big DAG of `bench/orch_bench.py` (N tasks in layers of 100, each after two tasks of the layer
before), driven through the whole request path of the API (Django's test client: authentication,
role check, body validation, the service, the JSON answer rendered) in this process, and reported
as CPU seconds rather than wall time, so that a loaded machine gives the same figures:

- CPU time of this process (user + system) and of the PostgreSQL backend serving its connection
  (from /proc: PostgreSQL runs on this machine);
- SQL statements (a wrapper around every statement), and the wall time for reference.

    .venv/bin/python bench/orch_big_dag.py                      # 100,000 tasks, schedule/graph/cancel
    .venv/bin/python bench/orch_big_dag.py --tasks 10000 --repeat 3
    .venv/bin/python bench/orch_big_dag.py --top 40             # with a cProfile of the schedule

The definitions are bulk-loaded once per size and reused (not measured). The database is
`orch_bigdag` on postgres@127.0.0.1:5432 (or ORCH_BIGDAG_DATABASE_URL), created and migrated when
missing; production settings, Redis from ORCH_REDIS_URL (default 127.0.0.1:6379); the roots'
wake-ups go to a queue of its own (under TEST_RUN_TOKEN's key prefix), purged after.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time
from pathlib import Path

from benchlib import bulk_define_layered, ensure_database, proc_cpu

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DB_URL = os.environ.get("ORCH_BIGDAG_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/orch_bigdag")
os.environ.update(
    {
        "DJANGO_SETTINGS_MODULE": "orchestrator.config.settings.production",
        "ORCH_DATABASE_URL": DB_URL,
        "ORCH_REDIS_URL": os.environ.get("ORCH_REDIS_URL", "redis://127.0.0.1:6379"),
        "ORCH_SECRET_KEY": "orch-bigdag-secret-key-not-for-production",
        "ORCH_FIELD_ENCRYPTION_KEYS": "dGVzdC1vbmx5LWZlcm5ldC1rZXktMzItYnl0ZXMtISE=",
        "ORCH_AUDIT_SIGNING_KEYS": "bench:YmVuY2gtb25seS1hdWRpdC1zaWduaW5nLXNlZWQtMzI=",  # Ed25519 seed, bench only
        "ORCH_ALLOWED_HOSTS": "testserver",
        "ORCH_SECURE_COOKIES": "false",
        "ORCH_LOG_LEVEL": "WARNING",
        "TEST_RUN_TOKEN": os.environ.get("TEST_RUN_TOKEN", "orchbigdag"),
    }
)
QUEUE = "orchbigdag"


def define(total: int) -> str:
    """The layered DAG of `total` tasks (bench/orch_bench.py's shape), made once per size."""
    from orchestrator.definitions.models import Dag

    prefix = f"big{total}_"
    dag_id = f"{prefix}dag"
    if Dag.objects.filter(pk=dag_id).exists():
        return dag_id
    return bulk_define_layered(prefix, total, QUEUE)


class Statements:
    """Counts statements; per statement text, how often and the PostgreSQL backend's CPU seconds."""

    def __init__(self, backend: int) -> None:
        self.backend = backend
        self.count = 0
        self.texts: dict[str, list[float]] = {}

    def __call__(self, execute, sql, params, many, context):
        self.count += 1
        key = " ".join(sql.split())[:100]
        before = proc_cpu(self.backend)
        try:
            return execute(sql, params, many, context)
        finally:
            entry = self.texts.setdefault(key, [0, 0.0])
            entry[0] += 1
            entry[1] += proc_cpu(self.backend) - before

    def show(self) -> None:
        for text, (times, cpu) in sorted(self.texts.items(), key=lambda kv: -kv[1][1]):
            if cpu >= 0.01:
                print(f"    {cpu:5.2f} s  {times:3d} x {text}")


def measured(label: str, call, backend: int, profiler: cProfile.Profile | None = None):
    from django.db import connection

    statements = Statements(backend)
    t0, pg0, w0 = os.times(), proc_cpu(backend), time.perf_counter()
    with connection.execute_wrapper(statements):
        if profiler:
            profiler.enable()
        response = call()
        if profiler:
            profiler.disable()
    t1, pg1, w1 = os.times(), proc_cpu(backend), time.perf_counter()
    own = t1.user - t0.user + t1.system - t0.system
    print(f"  {label:9} web process {own:6.2f} s CPU, PostgreSQL backend {pg1 - pg0:6.2f} s, "
          f"total {own + pg1 - pg0:6.2f} s; {statements.count} statements; wall {w1 - w0:6.2f} s")  # fmt: skip
    assert response.status_code in (200, 201), response.content[:500]
    return response, statements


def one_round(client, dag_id: str, backend: int, args: argparse.Namespace) -> None:
    """Schedule the DAG, read its graph, cancel the run."""
    from functools import partial

    profiler = cProfile.Profile() if args.top else None
    schedule = partial(client.post, "/api/schedule-dag", {"dag_id": dag_id}, content_type="application/json")
    response, statements = measured("schedule", schedule, backend, profiler)
    run_id = response.json()["run_id"]
    assert len(response.json()["tasks"]) == args.tasks
    if args.statements:
        statements.show()
    graph, statements = measured("graph", partial(client.get, f"/api/runs/{run_id}/graph"), backend)
    assert len(graph.json()["nodes"]) == args.tasks
    if args.statements:
        statements.show()
    cancel = partial(client.post, f"/api/cancel-run/{run_id}", {}, content_type="application/json")
    _, statements = measured("cancel", cancel, backend)
    if args.statements:
        statements.show()
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats(args.sort).print_stats(args.top)
        print(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--top", type=int, default=0, help="cProfile's top functions of the schedule")
    parser.add_argument("--sort", default="cumulative", help="cProfile order: cumulative, tottime...")
    parser.add_argument("--statements", action="store_true", help="list each request's statements")
    args = parser.parse_args()
    import django

    django.setup()
    ensure_database(DB_URL)
    from django.db import connection
    from django.test import Client

    from orchestrator.security.services import api_key_create

    dag_id = define(args.tasks)
    key = api_key_create(name=f"bigdag-{os.getpid()}-{time.time_ns()}", role="admin")[1]
    client = Client(headers={"X-API-Key": key})
    backend = connection.cursor().connection.info.backend_pid
    print(f"load average {os.getloadavg()[0]:.1f}; {args.tasks} tasks (CPU times: load does not enter them)")
    try:
        for _ in range(args.repeat):
            one_round(client, dag_id, backend, args)
    finally:
        from orchestrator.config.celery import app

        with app.connection_for_write() as conn:
            conn.default_channel.queue_purge(QUEUE)


if __name__ == "__main__":
    main()
