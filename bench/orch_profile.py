"""Cost of one task run on an agent, in process, independent of the load on the machine.

Runs the agent's own code path (`runs.executor.execute`: claim, the command in its own process
group under the reaper with output capture, completion with its event, run completion) for N task
runs of `true`, one after the other in this process, without Celery (whose cost per message is the
same as the bare Celery floor's), and reports per task run:

- CPU time of this process (user + system), of the commands it started (children, reaped), and of
  the reaper (from /proc);
- CPU time of the PostgreSQL backend serving this process's connection (from /proc: PostgreSQL
  runs on this machine), so the database's share is counted too;
- SQL statements and transactions (a wrapper around every statement, a counter of commits),
  hence round trips: one per statement, plus BEGIN and COMMIT per transaction block;
- Celery messages published (wake-ups) and processes started.

    .venv/bin/python bench/orch_profile.py                      # fan-out and chain, 300 each
    .venv/bin/python bench/orch_profile.py --tasks 1000 --shape fanout --top 30
    .venv/bin/python bench/orch_profile.py --sweep              # also the recovery sweep after them
    .venv/bin/python bench/orch_profile.py --stale              # also each wake-up again (claims nothing)

Shapes: `fanout` (one DAG of N independent tasks: every task run is a leaf, the run completes with
the last one) and `chain` (a DAG that is a chain of N tasks: each completion queues the next task
run and publishes its wake-up). The database is `orch_profile` on postgres@127.0.0.1:5432 (or
ORCH_PROFILE_DATABASE_URL), created and migrated when missing; production settings, Redis from
ORCH_REDIS_URL (default 127.0.0.1:6379), wake-ups on a queue of its own, purged after.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time
import uuid
from pathlib import Path

from benchlib import ensure_database, proc_cpu

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DB_URL = os.environ.get("ORCH_PROFILE_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/orch_profile")
os.environ.update(
    {
        "DJANGO_SETTINGS_MODULE": "orchestrator.config.settings.production",
        "ORCH_DATABASE_URL": DB_URL,
        "ORCH_REDIS_URL": os.environ.get("ORCH_REDIS_URL", "redis://127.0.0.1:6379"),
        "ORCH_SECRET_KEY": "orch-profile-secret-key-not-for-production",
        "ORCH_FIELD_ENCRYPTION_KEYS": "dGVzdC1vbmx5LWZlcm5ldC1rZXktMzItYnl0ZXMtISE=",
        "ORCH_AUDIT_SIGNING_KEYS": "bench:YmVuY2gtb25seS1hdWRpdC1zaWduaW5nLXNlZWQtMzI=",  # Ed25519 seed, bench only
        "ORCH_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "ORCH_LOG_LEVEL": "WARNING",
        "TEST_RUN_TOKEN": os.environ.get("TEST_RUN_TOKEN", "orchprofile"),
    }
)
QUEUE = "orchprofile"


def define(prefix: str, count: int, chain: bool) -> str:
    from orchestrator.definitions import services

    for i in range(count):
        deps = [f"{prefix}{i - 1}"] if chain and i else []
        services.task_definition_put(
            task_id=f"{prefix}{i}", name="", description="", command="true", dependencies=deps,
            parameters={}, queue=QUEUE,
        )  # fmt: skip
    dag_id = f"{prefix}dag"
    tasks = [{"id": f"{prefix}{i}", "parameters": {}} for i in range(count)]
    services.dag_put(dag_id=dag_id, name="", description="", tasks=tasks, context=None, tags=[])
    return dag_id


class Counters:
    """Statements (every execute through Django's connection), transaction commits, wake-ups."""

    def __init__(self) -> None:
        self.statements = self.commits = self.published = 0
        self.texts: dict[str, int] = {}

    def __call__(self, execute, sql, params, many, context):
        self.statements += 1
        key = " ".join(sql.split())[:90]
        self.texts[key] = self.texts.get(key, 0) + 1
        return execute(sql, params, many, context)


def measure(shape: str, count: int, top: int, sweep: bool, sort: str, stale: bool = False) -> None:
    from django.db import connection

    from orchestrator.runs import command, executor, wakeups
    from orchestrator.runs.models import Run, TaskRun
    from orchestrator.runs.planning import ScheduleOptions
    from orchestrator.runs.services import run_schedule_dag
    from orchestrator.system.services import recovery_sweep

    chain = shape == "chain"
    dag_id = define(f"p{uuid.uuid4().hex[:4]}{shape[0]}", count, chain)
    run, _ = run_schedule_dag(dag_id=dag_id, options=ScheduleOptions())
    order = {f"{dag_id[:-3]}{i}": i for i in range(count)}
    ids = sorted(TaskRun.objects.filter(run=run).values_list("task_id", "id"), key=lambda r: order[r[0]])
    # warm-up: the reaper, imports, the connection (one task run, not counted)
    executor.execute(task_run_id=ids[0][1], attempt=0, agent_id="profile", agent_session="")
    counters = Counters()
    original_commit = connection._commit
    original_send = wakeups.send_now

    def counting_commit():
        counters.commits += 1
        return original_commit()

    def counting_send(wakeups):
        counters.published += len(wakeups)
        return original_send(wakeups)

    connection._commit = counting_commit
    wakeups.send_now = counting_send
    backend = connection.cursor().connection.info.backend_pid
    reaper_pid = command.reaper.proc.pid if command.reaper.proc else 0
    profiler = cProfile.Profile() if top else None
    before = (os.times(), proc_cpu(backend), proc_cpu(reaper_pid), time.perf_counter())
    with connection.execute_wrapper(counters):
        if profiler:
            profiler.enable()
        for _, task_run_id in ids[1:]:
            status = executor.execute(
                task_run_id=task_run_id, attempt=0, agent_id="profile", agent_session=""
            )
            assert status == "completed", status
        if profiler:
            profiler.disable()
    t, pg, reaper, wall = os.times(), proc_cpu(backend), proc_cpu(reaper_pid), time.perf_counter()
    connection._commit = original_commit
    wakeups.send_now = original_send
    n = count - 1
    t0 = before[0]
    own = (t.user - t0.user + t.system - t0.system) * 1000 / n
    children = (t.children_user - t0.children_user + t.children_system - t0.children_system) * 1000 / n
    print(f"\n{shape}: {n} task runs of `true`, one after the other in this process")
    print(f"  agent process CPU     {own:6.2f} ms per task run "
          f"(user {(t.user - t0.user) * 1000 / n:.2f}, system {(t.system - t0.system) * 1000 / n:.2f})")  # fmt: skip
    print(f"  commands (children)   {children:6.2f} ms")
    print(f"  reaper                {(reaper - before[2]) * 1000 / n:6.2f} ms")
    print(f"  PostgreSQL backend    {(pg - before[1]) * 1000 / n:6.2f} ms")
    print(f"  wall time             {(wall - before[3]) * 1000 / n:6.2f} ms")
    print(f"  SQL statements        {counters.statements / n:6.2f} per task run; "
          f"transaction blocks {counters.commits / n:.2f}; "
          f"round trips {(counters.statements + 2 * counters.commits) / n:.2f}")  # fmt: skip
    print(f"  wake-ups published    {counters.published / n:6.2f}")
    assert Run.objects.get(pk=run.run_id).status == "completed"
    for text, times in sorted(counters.texts.items(), key=lambda kv: -kv[1])[:12]:
        print(f"    {times / n:5.2f} x {text}")
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats(sort).print_stats(top)
        print(out.getvalue())
    if stale:
        # Every wake-up delivered again once its task run completed: what a message costs that
        # claims nothing (a duplicate, or one whose task run another message's claim took).
        before_stale = (os.times(), proc_cpu(backend), counters.statements)
        with connection.execute_wrapper(counters):
            for _, task_run_id in ids[1:]:
                assert executor.execute(task_run_id=task_run_id, attempt=0, agent_id="profile") is None
        t1, pg1 = os.times(), proc_cpu(backend)
        t0 = before_stale[0]
        print(f"  a stale wake-up (its task run already claimed), per message: "
              f"{(counters.statements - before_stale[2]) / n:.2f} statements, "
              f"{(t1.user - t0.user + t1.system - t0.system) * 1000 / n:.2f} ms of this process's CPU, "
              f"{(pg1 - before_stale[1]) * 1000 / n:.2f} ms of PostgreSQL's")  # fmt: skip
    if sweep:
        t0, pg0 = os.times(), proc_cpu(backend)
        recovery_sweep(sweeper="profile", force=True)
        t1, pg1 = os.times(), proc_cpu(backend)
        print(f"  recovery sweep after them, per task run: {(t1.user - t0.user + t1.system - t0.system) * 1000 / n:.2f}"
              f" ms of this process's CPU, {(pg1 - pg0) * 1000 / n:.2f} ms of PostgreSQL's")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--shape", choices=("fanout", "chain", "both"), default="both")
    parser.add_argument("--top", type=int, default=0, help="cProfile's top functions (0: no profile)")
    parser.add_argument("--sort", default="cumulative", help="cProfile order: cumulative, tottime...")
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--stale", action="store_true", help="also every wake-up again, claiming nothing")
    args = parser.parse_args()
    import django

    django.setup()
    ensure_database(DB_URL)
    print(f"load average {os.getloadavg()[0]:.1f} (the figures are CPU times: load does not enter them)")
    shapes = ("fanout", "chain") if args.shape == "both" else (args.shape,)
    try:
        for shape in shapes:
            measure(shape, args.tasks, args.top, args.sweep, args.sort, args.stale)
    finally:
        from orchestrator.config.celery import app

        with app.connection_for_write() as conn:
            conn.default_channel.queue_purge(QUEUE)


if __name__ == "__main__":
    main()
