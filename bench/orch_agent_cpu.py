"""CPU time per task run of a real agent against bare Celery's per task, independent of machine load.

Starts one agent as deployed (`manage_orch.py run_agent`: control queue, heartbeat, scheduler and
recovery sweep included, production settings) with one pool process, runs a DAG of N independent
`true` tasks through it, and sums the CPU time (user + system) that went into it:

- the agent's processes: main process, pool process, the reaper, the commands (reaped children);
- the PostgreSQL backends of its connections that live throughout (the pool process's and the
  benchmark's own), read from /proc before and after (the threads' short-lived connections are not
  counted, so the database figure is a lower bound);
- Redis (the whole server, from /proc: nothing else should use it much meanwhile; indicative).

Then the same for one bare Celery worker (bench/orch_celery_floor.py) running N `noop` tasks. The
ratio of CPU per task is what throughput comes to on a machine whose CPU is the limit.

    .venv/bin/python bench/orch_agent_cpu.py [--tasks 500] [--stripped]

`--stripped` runs bench/orch_agent_nolimits.py instead (the agent without the code paths of
priorities, pools and max_active_runs). Database: ORCH_BENCH_DATABASE_URL (default orch_bench).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from orch_bench import SERVICE_ENV, define, ensure_database, purge_queues  # noqa: E402

from tests.support.processes import ServiceProcess, child_env, wait_for  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu(pid: int, *, main_only: bool = False) -> float:
    """CPU seconds of a process and its descendants, living and reaped (or of the process alone)."""
    total = 0.0
    try:
        root = psutil.Process(pid)
        procs = [root] if main_only else [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    for p in procs:
        try:
            t = p.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += t.user + t.system + (0 if main_only else t.children_user + t.children_system)
    return total


def pids_cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += t.user + t.system
    return total


def backends(database: str) -> list[int]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", [database])
        return [row[0] for row in cursor.fetchall()]


def redis_pids() -> list[int]:
    return [p.pid for p in psutil.process_iter(["name"]) if (p.info["name"] or "").startswith("redis-server")]


def agent_per_task(count: int, stripped: bool) -> None:
    from orchestrator.runs.models import Run, TaskRun
    from orchestrator.runs.planning import ScheduleOptions
    from orchestrator.runs.services import run_schedule_dag

    queue = f"cpu{uuid.uuid4().hex[:4]}"
    env = child_env({**SERVICE_ENV, "ORCH_LOG_LEVEL": "INFO"})
    entry = ["bench/orch_agent_nolimits.py"] if stripped else ["manage_orch.py", "run_agent"]
    agent = ServiceProcess(
        f"orch-cpu-{queue}",
        [sys.executable, *entry, "--queues", queue, "--name", queue, "--concurrency", "1"],
        env,
    )
    try:
        wait_for(lambda: "ready." in agent.log_text(), timeout=90, what="agent")
        warm = define(f"{queue}w", 20, chain=False, queue=queue)
        dag = define(f"{queue}f", count, chain=False, queue=queue)
        run, _ = run_schedule_dag(dag_id=warm, options=ScheduleOptions())
        wait_for(lambda: Run.objects.get(pk=run.run_id).status == "completed", timeout=120, what="warm-up")
        database = SERVICE_ENV["ORCH_DATABASE_URL"].rsplit("/", 1)[1]
        pg = backends(database)
        redis = redis_pids()
        main = agent.proc.pid  # the worker's main process; the pool processes are its children
        main_before = tree_cpu(main, main_only=True)
        before = (tree_cpu(agent.proc.pid), pids_cpu(pg), pids_cpu(redis), time.perf_counter())
        run, _ = run_schedule_dag(dag_id=dag, options=ScheduleOptions())
        wait_for(lambda: Run.objects.get(pk=run.run_id).status == "completed", timeout=1200, what="run")
        after = (tree_cpu(agent.proc.pid), pids_cpu(pg), pids_cpu(redis), time.perf_counter())
        main_cpu = (tree_cpu(main, main_only=True) - main_before) * 1000 / count
        assert TaskRun.objects.filter(run=run, status="completed").count() == count
    finally:
        agent.stop()
        purge_queues(queue)
    label = "agent without limits code" if stripped else "agent"
    report(label, count, before, after)
    print(f"  of which the worker's main process {main_cpu:.2f} ms", flush=True)


def floor_per_task(count: int) -> None:
    from orch_celery_floor import _redis, noop

    args = [sys.executable, "-m", "celery", "-A", "bench.orch_celery_floor", "worker", "-Q", "floor", "-c", "1",
            "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "INFO", "-n", "cpufloor@%h"]  # fmt: skip
    worker = ServiceProcess("orch-cpu-floor", args, child_env({}))
    try:
        key = f"floor:{uuid.uuid4().hex}"
        for _ in range(20):
            noop.delay(f"{key}:warm")
        wait_for(lambda: _redis.llen(f"{key}:warm:done") == 20, timeout=60, what="floor worker")
        redis = redis_pids()
        main = worker.proc.pid
        main_before = tree_cpu(main, main_only=True)
        before = (tree_cpu(worker.proc.pid), 0.0, pids_cpu(redis), time.perf_counter())
        for _ in range(count):
            noop.delay(key)
        wait_for(lambda: _redis.llen(f"{key}:done") == count, timeout=600, what="floor tasks")
        after = (tree_cpu(worker.proc.pid), 0.0, pids_cpu(redis), time.perf_counter())
        main_cpu = (tree_cpu(main, main_only=True) - main_before) * 1000 / count
    finally:
        worker.stop()
    report("bare Celery", count, before, after)
    print(f"  of which the worker's main process {main_cpu:.2f} ms", flush=True)


def report(label: str, count: int, before: tuple, after: tuple) -> None:
    own, pg, redis, wall = ((a - b) * 1000 / count for a, b in zip(after, before, strict=True))
    print(
        f"{label}: {own:.2f} ms CPU per task (worker processes and commands), PostgreSQL >= {pg:.2f} ms, "
        f"Redis {redis:.2f} ms; wall {wall:.2f} ms per task, one pool process",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--stripped", action="store_true")
    parser.add_argument("--skip-floor", action="store_true")
    args = parser.parse_args()
    import django

    django.setup()
    ensure_database()
    print(f"load average {os.getloadavg()[0]:.1f}")
    agent_per_task(args.tasks, stripped=False)
    if args.stripped:
        agent_per_task(args.tasks, stripped=True)
    if not args.skip_floor:
        floor_per_task(args.tasks)


if __name__ == "__main__":
    main()
