"""Orchestrator benchmark (not a test). Results and method: docs/benchmarks.md, "Orchestrator".

    .venv/bin/python bench/orch_bench.py [--chain 200] [--fanout 1000] [--concurrency 2]

Needs PostgreSQL and Redis on 127.0.0.1 (as the test suite does). Uses its own database
(ORCH_BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/orch_bench) and Redis key prefix.

1. Hand-over latency: a DAG that is a chain of N `true` tasks; for each link, the time from the
   task run's end (recorded by its agent) to its dependent's start (recorded by the next agent).
2. Throughput: a DAG of M independent `true` tasks, two agents; task runs per second from the
   moment the run is scheduled to the last task run's end.
3. The floor: the same two shapes as bare Celery tasks on the same Redis broker (no database).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DB_URL = os.environ.get("ORCH_BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/orch_bench")
os.environ.update(
    DJANGO_SETTINGS_MODULE="orchestrator.config.settings.test",
    ORCH_DATABASE_URL=DB_URL,
    TEST_RUN_TOKEN="orchbench",
    ORCH_LOG_LEVEL="WARNING",
)

from tests.support.processes import ServiceProcess, child_env, wait_for  # noqa: E402


def ensure_database() -> None:
    import psycopg

    name = DB_URL.rsplit("/", 1)[1]
    with psycopg.connect(DB_URL.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary(label: str, values_ms: list[float]) -> dict:
    out = {
        "p50": percentile(values_ms, 50),
        "p95": percentile(values_ms, 95),
        "p99": percentile(values_ms, 99),
        "mean": statistics.fmean(values_ms),
    }
    print(f"{label}: n={len(values_ms)} " + " ".join(f"{k}={v:.1f}ms" for k, v in out.items()), flush=True)
    return out


def start_agents(concurrency: int) -> list[ServiceProcess]:
    env = child_env(
        {"ORCH_AGENT_HEARTBEAT_SECONDS": "2", "ORCH_LOG_LEVEL": "INFO", "ORCH_DB_CONN_MAX_AGE": "60"}
    )
    procs = []
    for i in (1, 2):
        args = [sys.executable, "manage_orch.py", "run_agent", "--queues", "bench", "--name", f"bench{i}",
                "--concurrency", str(concurrency), "--no-control"]  # fmt: skip
        procs.append(ServiceProcess(f"orch-bench-agent{i}", args, env))
    for proc in procs:
        wait_for(lambda p=proc: "ready." in p.log_text(), timeout=60, what=f"{proc.name}")
    return procs


def define(prefix: str, count: int, chain: bool) -> str:
    from orchestrator.definitions import services

    for i in range(count):
        deps = [f"{prefix}{i - 1}"] if chain and i else []
        services.task_definition_put(
            task_id=f"{prefix}{i}", name="", description="", command="true", dependencies=deps,
            parameters={}, queue="bench",
        )  # fmt: skip
    dag_id = f"{prefix}dag"
    tasks = [{"id": f"{prefix}{i}", "parameters": {}} for i in range(count)]
    services.dag_put(dag_id=dag_id, name="", description="", tasks=tasks, context=None, tags=[])
    return dag_id


def run_dag(dag_id: str, timeout: float):
    from orchestrator.runs.models import Run
    from orchestrator.runs.planning import ScheduleOptions
    from orchestrator.runs.services import run_schedule_dag

    t0 = time.time()
    run, _ = run_schedule_dag(dag_id=dag_id, options=ScheduleOptions())
    wait_for(
        lambda: Run.objects.get(pk=run.run_id).status in ("completed", "failed"),
        timeout=timeout,
        interval=0.05,
        what="run",
    )
    run = Run.objects.get(pk=run.run_id)
    assert run.status == "completed", run.status
    return run, t0


def bench_orchestrator(chain: int, fanout: int, concurrency: int) -> dict:
    from orchestrator.runs.models import TaskRun

    prefix = f"b{uuid.uuid4().hex[:4]}"
    chain_dag = define(f"{prefix}c", chain, chain=True)
    fan_dag = define(f"{prefix}f", fanout, chain=False)
    agents = start_agents(concurrency)
    try:
        run_dag(define(f"{prefix}w", 20, chain=False), 60)  # warm-up: connections, imports
        run, _ = run_dag(chain_dag, 600)
        rows = {tr.task_id: tr for tr in TaskRun.objects.filter(run=run)}
        handovers = [
            (rows[f"{prefix}c{i}"].start_time - rows[f"{prefix}c{i - 1}"].end_time).total_seconds() * 1000
            for i in range(1, chain)
        ]
        results = {"handover": summary(f"orchestrator hand-over ({chain}-task chain)", handovers)}
        run, t0 = run_dag(fan_dag, 600)
        ends = TaskRun.objects.filter(run=run).values_list("end_time", flat=True)
        elapsed = max(e.timestamp() for e in ends) - t0
        results["throughput"] = fanout / elapsed
        print(f"orchestrator throughput ({fanout} independent tasks, 2 agents x {concurrency}): "
              f"{results['throughput']:.1f} task runs/s ({elapsed:.2f} s)", flush=True)  # fmt: skip
        return results
    finally:
        for proc in agents:
            proc.stop()


def bench_floor(chain: int, fanout: int, concurrency: int) -> dict:
    sys.path.insert(0, str(ROOT / "bench"))
    from bench.orch_celery_floor import _redis, hop, noop

    env = child_env({})
    args = [sys.executable, "-m", "celery", "-A", "bench.orch_celery_floor", "worker", "-Q", "floor", "-c", str(concurrency),
            "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "INFO"]  # fmt: skip
    workers = [ServiceProcess(f"orch-bench-floor{i}", args + ["-n", f"floor{i}@%h"], env) for i in (1, 2)]
    try:
        key = f"floor:{uuid.uuid4().hex}"
        noop.delay(f"{key}:warm")
        wait_for(lambda: _redis.llen(f"{key}:warm:done") == 1, timeout=60, what="floor workers")
        hop.delay(key, 0, chain)
        wait_for(lambda: _redis.llen(f"{key}:times") == chain, timeout=600, what="floor chain")
        times = {}
        for raw in _redis.lrange(f"{key}:times", 0, -1):
            index, started, ended = raw.decode().split()
            times[int(index)] = (float(started), float(ended))
        handovers = [(times[i][0] - times[i - 1][1]) * 1000 for i in range(1, chain)]
        results = {"handover": summary(f"bare Celery hand-over ({chain}-task chain)", handovers)}
        t0 = time.time()
        for _ in range(fanout):
            noop.delay(key)
        wait_for(lambda: _redis.llen(f"{key}:done") == fanout, timeout=600, what="floor fan-out")
        elapsed = max(float(x) for x in _redis.lrange(f"{key}:done", 0, -1)) - t0
        results["throughput"] = fanout / elapsed
        print(
            f"bare Celery throughput ({fanout} tasks, 2 workers x {concurrency}): {results['throughput']:.1f} tasks/s ({elapsed:.2f} s)",
            flush=True,
        )
        return results
    finally:
        for proc in workers:
            proc.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chain", type=int, default=200)
    parser.add_argument("--fanout", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=2, help="pool processes per agent")
    parser.add_argument("--skip-floor", action="store_true")
    args = parser.parse_args()
    import django

    django.setup()
    ensure_database()
    print(f"machine: {os.cpu_count()} CPUs; agents: 2 x concurrency {args.concurrency}", flush=True)
    bench_orchestrator(args.chain, args.fanout, args.concurrency)
    if not args.skip_floor:
        bench_floor(args.chain, args.fanout, args.concurrency)


if __name__ == "__main__":
    main()
