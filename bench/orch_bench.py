"""Orchestrator benchmark (not a test). Results and method: docs/benchmarks.md, "Orchestrator".

    .venv/bin/python bench/orch_bench.py [--chain 200] [--fanout 1000] [--rounds 2] [--big 10000]
                                         [--runs 100000] [--concurrency 2] [--skip-floor]

Needs PostgreSQL and Redis on 127.0.0.1 (as the test suite does). Uses its own database
(ORCH_BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/orch_bench) and Redis key
prefix. Runs what deploy/Procfile deploys: the web API under uvicorn (orch-web, production settings,
a connection pool of 8) and agents started with `manage_orch.py run_agent` (orch-agent).

1. Hand-over latency: a DAG that is a chain of N `true` tasks; for each link, the time from the
   task run's end (recorded by its agent) to its dependent's start (recorded by the next agent),
   on two agents that record those times to the microsecond (bench/orch_agent_precise.py; the
   database otherwise stores them to the millisecond, which the floor's times are not).
2. Throughput: a DAG of M independent `true` tasks, two agents; task runs per second from the
   moment the run is scheduled to the last task run's end. Run `--rounds` times, alternating with:
3. Unused limits: the same fan-out on two agents started without the priority, pool and
   max_active_runs code paths (bench/orch_agent_nolimits.py), alternating with phase 2.
4. Big DAG: a 10,000-task DAG (100 layers of 100, each task after two of the layer before) scheduled
   with `POST /api/schedule-dag`, then its graph read with `GET /api/runs/{id}/graph`.
5. Runs list: 100,000 runs bulk-loaded (each with 3 task runs), then `GET /api/runs` with typical
   filters and pages.
6. The floor: phases 1 and 2 as bare Celery tasks on the same Redis broker (no database).
"""

from __future__ import annotations

import argparse
import io
import os
import random
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DB_URL = os.environ.get("ORCH_BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/orch_bench")
# Production settings, as deployed; the secrets are the benchmark's own.
SERVICE_ENV = {
    "DJANGO_SETTINGS_MODULE": "orchestrator.config.settings.production",
    "ORCH_DATABASE_URL": DB_URL,
    "ORCH_REDIS_URL": "redis://127.0.0.1:6379",
    "ORCH_SECRET_KEY": "orch-bench-secret-key-not-for-production",
    "ORCH_FIELD_ENCRYPTION_KEYS": "dGVzdC1vbmx5LWZlcm5ldC1rZXktMzItYnl0ZXMtISE=",
    "ORCH_AUDIT_SIGNING_KEYS": "bench:YmVuY2gtb25seS1hdWRpdC1zaWduaW5nLXNlZWQtMzI=",  # Ed25519 seed, bench only
    "ORCH_ALLOWED_HOSTS": "127.0.0.1,localhost",
    "ORCH_SECURE_COOKIES": "false",
    # Redis key prefix (shared.conf.isolation_prefix): two benchmarks on one machine keep apart.
    "TEST_RUN_TOKEN": os.environ.get("TEST_RUN_TOKEN", "orchbench"),
    "ORCH_LOG_LEVEL": "WARNING",
}
os.environ.update(SERVICE_ENV)

import httpx  # noqa: E402
from benchlib import bulk_define_layered, ensure_database  # noqa: E402

from tests.support.processes import ServiceProcess, child_env, free_port, wait_for  # noqa: E402

BULK_PREFIX = "bulk_"  # run ids of the runs-list phase's bulk-loaded runs


def purge_queues(*queues: str) -> None:
    """Messages left by an interrupted earlier run would be claimed for nothing during this one."""
    from orchestrator.config.celery import app

    with app.connection_for_write() as conn:
        for queue in queues:
            conn.default_channel.queue_purge(queue)


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


AGENT_ENTRIES = {
    "deployed": ["manage_orch.py", "run_agent"],
    "nolimits": ["bench/orch_agent_nolimits.py"],  # without the limits code paths (phase 3)
    "precise": ["bench/orch_agent_precise.py"],  # start and end times to the microsecond (phase 1)
}


def start_agents(concurrency: int, queue: str, *, entry_name: str = "deployed") -> list[ServiceProcess]:
    """Two agents as orch-agent starts them (control queue, scheduler and sweeper included)."""
    env = child_env({**SERVICE_ENV, "ORCH_LOG_LEVEL": "INFO"})
    entry = AGENT_ENTRIES[entry_name]
    procs = []
    for i in (1, 2):
        name = f"{queue}{i}"
        args = [sys.executable, *entry, "--queues", queue, "--name", name, "--concurrency", str(concurrency)]
        procs.append(ServiceProcess(f"orch-bench-{name}", args, env))
    for proc in procs:
        wait_for(lambda p=proc: "ready." in p.log_text(), timeout=90, what=f"{proc.name}")
    return procs


def start_web() -> tuple[ServiceProcess, str]:
    """orch-web as deploy/Procfile starts it."""
    port = free_port()
    env = child_env({**SERVICE_ENV, "ORCH_DB_POOL_MAX_SIZE": "8"})
    args = [sys.executable, "-m", "uvicorn", "orchestrator.config.asgi:application", "--host", "127.0.0.1",
            "--port", str(port), "--no-access-log", "--lifespan", "off", "--timeout-graceful-shutdown", "8",
            "--no-proxy-headers", "--http", "shared.web.uvicorn_http:HeadBoundHttpToolsProtocol"]  # fmt: skip
    web = ServiceProcess("orch-bench-web", args, env)
    base = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        try:
            return httpx.get(f"{base}/api/health", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    wait_for(ready, timeout=90, what="orch-web")
    return web, base


def api_key() -> str:
    from orchestrator.security.services import api_key_create

    return api_key_create(name=f"bench-{uuid.uuid4().hex[:8]}", role="admin")[1]


def define(prefix: str, count: int, chain: bool, queue: str) -> str:
    from orchestrator.definitions import services

    for i in range(count):
        deps = [f"{prefix}{i - 1}"] if chain and i else []
        services.task_definition_put(
            task_id=f"{prefix}{i}", name="", description="", command="true", dependencies=deps,
            parameters={}, queue=queue,
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


def fanout_throughput(dag_id: str, label: str) -> float:
    from orchestrator.runs.models import TaskRun

    run, t0 = run_dag(dag_id, 600)
    ends = TaskRun.objects.filter(run=run).values_list("end_time", flat=True)
    elapsed = max(e.timestamp() for e in ends) - t0
    count = len(ends)
    print(f"{label}: {count / elapsed:.1f} task runs/s ({count} in {elapsed:.2f} s)", flush=True)
    return count / elapsed


def bench_handover(prefix: str, chain: int, concurrency: int) -> dict:
    """Phase 1 on two agents that keep the microseconds of start and end times (queue `benchho`,
    bench/orch_agent_precise.py), stopped before the other phases. The same differences as the
    database stores them (to the millisecond) are printed too, to show what that rounding does."""
    from orchestrator.runs.models import TaskRun

    chain_dag = define(f"{prefix}c", chain, chain=True, queue="benchho")
    agents = start_agents(concurrency, "benchho", entry_name="precise")
    try:
        run_dag(define(f"{prefix}h", 20, chain=False, queue="benchho"), 300)  # warm-up: connections, imports
        run, _ = run_dag(chain_dag, 600)
    finally:
        for proc in agents:
            proc.stop()
    rows = {tr.task_id: tr for tr in TaskRun.objects.filter(run=run)}
    links = [(rows[f"{prefix}c{i - 1}"].end_time, rows[f"{prefix}c{i}"].start_time) for i in range(1, chain)]
    handovers = [(start - end).total_seconds() * 1000 for end, start in links]
    result = summary(f"orchestrator hand-over ({chain}-task chain)", handovers)

    def ms(t: datetime) -> datetime:
        return t.replace(microsecond=t.microsecond // 1000 * 1000)

    stored = [(ms(start) - ms(end)).total_seconds() * 1000 for end, start in links]
    summary("  the same, from times stored to the millisecond", stored)
    return result


def bench_orchestrator(chain: int, fanout: int, rounds: int, concurrency: int) -> dict:
    """Phase 1 (bench_handover), then phases 2-3: the deployed agents on queue `bench`, the
    stripped ones on `benchnl`; both pairs run all along (idle in turn), so the rounds alternate
    without restarts."""
    prefix = f"b{uuid.uuid4().hex[:4]}"
    results: dict = {"handover": bench_handover(prefix, chain, concurrency)}
    fan_dag = define(f"{prefix}f", fanout, chain=False, queue="bench")
    plain_dag = define(f"{prefix}n", fanout, chain=False, queue="benchnl")
    agents = start_agents(concurrency, "bench") + start_agents(concurrency, "benchnl", entry_name="nolimits")
    try:
        run_dag(define(f"{prefix}w", 20, chain=False, queue="bench"), 300)  # warm-up: connections, imports
        run_dag(define(f"{prefix}v", 20, chain=False, queue="benchnl"), 300)
        deployed, stripped = [], []
        for r in range(rounds):
            deployed.append(fanout_throughput(fan_dag, f"orchestrator throughput, round {r + 1}"))
            stripped.append(fanout_throughput(plain_dag, f"  without limits code, round {r + 1}"))
        results["throughput"] = statistics.fmean(deployed)
        results["throughput_nolimits"] = statistics.fmean(stripped)
        return results
    finally:
        for proc in agents:
            proc.stop()


def bench_big_dag(base: str, key: str, total: int) -> dict:
    """Phase 4, through orch-web. No agent consumes the DAG's queue: the run is cancelled after."""
    dag_id = bulk_define_layered(f"g{uuid.uuid4().hex[:4]}_", total, "bigdag")
    headers = {"X-API-Key": key}
    with httpx.Client(base_url=base, headers=headers, timeout=120) as client:
        t0 = time.perf_counter()
        response = client.post("/api/schedule-dag", json={"dag_id": dag_id})
        scheduled = (time.perf_counter() - t0) * 1000
        assert response.status_code in (200, 201), response.text[:500]
        run_id = response.json()["run_id"]
        print(f"big DAG ({total} tasks) scheduled through the API: {scheduled:.0f} ms", flush=True)
        graph_times = []
        for _ in range(5):
            t0 = time.perf_counter()
            response = client.get(f"/api/runs/{run_id}/graph")
            graph_times.append((time.perf_counter() - t0) * 1000)
            assert response.status_code == 200, response.text[:500]
        body = response.json()
        assert len(body["nodes"]) == total, len(body["nodes"])
        graph = summary(
            f"big DAG graph ({len(body['nodes'])} nodes, {len(body['edges'])} edges)", graph_times
        )
        # The cancel of the whole run (its task runs set-based, client-timed); the roots' wake-ups
        # are dropped from the broker after (nothing serves the queue).
        t0 = time.perf_counter()
        response = client.post(f"/api/cancel-run/{run_id}", timeout=600)
        cancelled = (time.perf_counter() - t0) * 1000
        assert response.status_code == 200, response.text[:500]
        print(f"big DAG ({total} tasks) cancelled through the API: {cancelled:.0f} ms", flush=True)
    purge_queues("bigdag")
    return {"schedule_ms": scheduled, "graph": graph, "cancel_ms": cancelled}


def bulk_load_runs(count: int) -> None:
    """Phase 5's runs, each with 3 task runs, loaded with COPY (once: a rerun reuses them). A mix
    of statuses over 20 DAGs and 30 days, as a long-lived deployment accumulates."""
    from django.db import connection

    from orchestrator.runs.models import Run

    have = Run.objects.filter(run_id__startswith=BULK_PREFIX).count()
    if have < count:
        _load_runs(have, count)
    # The tables as autovacuum keeps them, also after the churn of this run's phases and earlier
    # runs (visibility map set: counts can use the indexes; statistics current).
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE orch_runs_run")
        cursor.execute("VACUUM ANALYZE orch_runs_taskrun")


def _load_runs(have: int, count: int) -> None:
    from django.db import connection

    rng = random.Random(16)
    statuses = ["completed"] * 8 + ["failed", "cancelled"]
    start = datetime.now(UTC) - timedelta(days=30)
    runs, task_runs = io.StringIO(), io.StringIO()
    for i in range(have, count):
        run_id = f"{BULK_PREFIX}{i:07d}"
        status = rng.choice(statuses)
        began = start + timedelta(seconds=i * 30 * 86400 / count)
        ended = began + timedelta(seconds=rng.randint(1, 600))
        runs.write(f"{run_id}\tdag{i % 20}\t{status}\t{began.isoformat()}\t{ended.isoformat()}\n")
        for t in range(3):
            tr_status = status if t == 2 else "completed"
            task_runs.write(
                f"{run_id}_t{t}\t{run_id}\tt{t}\t{tr_status}\t{began.isoformat()}\t{ended.isoformat()}\n"
            )
    defaults = "'{}', '{}', '{}', 0, 0, false, 0, '{}', false"
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMP TABLE bench_runs (run_id text, dag_id text, status text, s timestamptz, e timestamptz)"
        )
        cursor.execute(
            "CREATE TEMP TABLE bench_trs (id text, run_id text, task_id text, status text, s timestamptz, e timestamptz)"
        )
        raw = cursor.cursor
        with raw.copy("COPY bench_runs FROM STDIN") as copy:
            copy.write(runs.getvalue())
        with raw.copy("COPY bench_trs FROM STDIN") as copy:
            copy.write(task_runs.getvalue())
        cursor.execute(
            "INSERT INTO orch_runs_run (run_id, dag_id, status, start_time, end_time, context, parameters,"
            " env_vars, retries, retry_delay_seconds, cancel_force, priority, versions, waiting)"
            f" SELECT run_id, dag_id, status, s, e, {defaults} FROM bench_runs"
        )
        cursor.execute(
            "INSERT INTO orch_runs_taskrun (id, run_id, task_id, command, env, queue, upstream, has_dependents,"
            " status, attempts, max_attempts, retry_delay_seconds, start_time, end_time, log_bytes,"
            " log_truncated, priority)"
            " SELECT id, run_id, task_id, 'true', '{}', 'default', '[]', false, status, 1, 1, 0, s, e, 0, false, 0"
            " FROM bench_trs"
        )
        cursor.execute("DROP TABLE bench_runs, bench_trs")


def bench_runs_list(base: str, key: str, count: int, requests: int) -> dict:
    """Phase 5: one client, one request at a time (latency, not load)."""
    t0 = time.perf_counter()
    bulk_load_runs(count)
    print(f"runs list: {count} runs stored (loaded in {time.perf_counter() - t0:.1f} s)", flush=True)
    since = (datetime.now(UTC) - timedelta(days=7)).strftime("%Y-%m-%dT%H:%M:%SZ")
    queries = [
        "/api/runs",
        "/api/runs?limit=50",
        "/api/runs?status=failed",
        "/api/runs?dag_id=dag7",
        "/api/runs?dag_id=dag3&status=completed",
        f"/api/runs?since={since}",
        "/api/runs?offset=500&limit=25",
        "/api/runs?status=cancelled&offset=200",
        "/api/runs?sort=end_time",
    ]
    times = []
    with httpx.Client(base_url=base, headers={"X-API-Key": key}, timeout=30) as client:
        for q in queries:  # warm-up
            response = client.get(q)
            assert response.status_code == 200, (q, response.text[:300])
        for i in range(requests):
            t0 = time.perf_counter()
            response = client.get(queries[i % len(queries)])
            times.append((time.perf_counter() - t0) * 1000)
            assert response.status_code == 200
    return summary(f"runs list ({len(queries)} query shapes, {count} runs stored)", times)


def bench_floor(chain: int, fanout: int, rounds: int, concurrency: int, log_level: str = "INFO") -> dict:
    sys.path.insert(0, str(ROOT / "bench"))
    from bench.orch_celery_floor import _redis, hop, noop

    env = child_env({})
    args = [sys.executable, "-m", "celery", "-A", "bench.orch_celery_floor", "worker", "-Q", "floor", "-c", str(concurrency),
            "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", log_level]  # fmt: skip
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
        results: dict = {"handover": summary(f"bare Celery hand-over ({chain}-task chain)", handovers)}
        rates = []
        for r in range(rounds):
            done = f"{key}:{r}"
            t0 = time.time()
            for _ in range(fanout):
                noop.delay(done)
            wait_for(lambda d=done: _redis.llen(f"{d}:done") == fanout, timeout=600, what="floor fan-out")
            elapsed = max(float(x) for x in _redis.lrange(f"{done}:done", 0, -1)) - t0
            rates.append(fanout / elapsed)
            print(
                f"bare Celery throughput, round {r + 1}: {fanout / elapsed:.1f} tasks/s ({elapsed:.2f} s)",
                flush=True,
            )
        results["throughput"] = statistics.fmean(rates)
        return results
    finally:
        for proc in workers:
            proc.stop()


def print_table(orch: dict, floor: dict | None, big: dict | None, runs: dict | None) -> None:
    def ratio(ours: float, theirs: float | None) -> str:
        return f"{ours / theirs:.2f}x" if theirs else "-"

    fh = floor["handover"] if floor else None
    ft = floor["throughput"] if floor else None
    ho = orch["handover"]
    cost = 1 - orch["throughput"] / orch["throughput_nolimits"]
    rows = [
        ("hand-over p50", f"{ho['p50']:.1f} ms", f"{fh['p50']:.1f} ms" if fh else "-", ratio(ho["p50"], fh and fh["p50"]), "<= 1.2x bare Celery"),
        ("hand-over p95", f"{ho['p95']:.1f} ms", f"{fh['p95']:.1f} ms" if fh else "-", ratio(ho["p95"], fh and fh["p95"]), "<= 10 ms"),
        ("throughput", f"{orch['throughput']:.0f} /s", f"{ft:.0f} /s" if ft else "-", ratio(orch["throughput"], ft), ">= 0.85x"),
        ("throughput, no limits code", f"{orch['throughput_nolimits']:.0f} /s", "", "", ""),
        ("cost of unused limits", f"{cost * 100:+.1f} %", "", "", "<= 10 %"),
    ]  # fmt: skip
    if big:
        rows.append(("10k-task DAG scheduled", f"{big['schedule_ms']:.0f} ms", "", "", "< 2000 ms"))
        rows.append(("10k-task DAG graph p50", f"{big['graph']['p50']:.0f} ms", "", "", "< 500 ms"))
        rows.append(
            ("10k-task DAG graph max", f"{max(big['graph']['p95'], big['graph']['p99']):.0f} ms", "", "", "")
        )
        rows.append(("10k-task DAG cancelled", f"{big['cancel_ms']:.0f} ms", "", "", "< 2000 ms"))
    if runs:
        rows.append(("runs list p50", f"{runs['p50']:.1f} ms", "", "", ""))
        rows.append(("runs list p95", f"{runs['p95']:.1f} ms", "", "", "< 100 ms"))
    print("\n| measure | orchestrator | bare Celery | ratio | goal |\n|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chain", type=int, default=200)
    parser.add_argument("--fanout", type=int, default=1000)
    parser.add_argument(
        "--rounds", type=int, default=2, help="fan-out rounds (each with and without limits code)"
    )
    parser.add_argument("--big", type=int, default=10_000, help="tasks in the big DAG (0: skip)")
    parser.add_argument("--runs", type=int, default=100_000, help="runs stored for the runs list (0: skip)")
    parser.add_argument("--list-requests", type=int, default=450)
    parser.add_argument("--concurrency", type=int, default=2, help="pool processes per agent")
    parser.add_argument("--skip-floor", action="store_true")
    parser.add_argument(
        "--floor-log-level",
        default="INFO",
        help="the floor workers' -l (INFO logs two lines per task, as run)",
    )
    args = parser.parse_args()
    import django

    django.setup()
    ensure_database(DB_URL)
    purge_queues("bench", "benchnl", "benchho", "bigdag")
    started = time.perf_counter()
    load = os.getloadavg()[0]
    print(
        f"machine: {os.cpu_count()} CPUs, load average {load:.1f}; agents: 2 x concurrency {args.concurrency}"
    )
    orch = bench_orchestrator(args.chain, args.fanout, args.rounds, args.concurrency)
    floor = (
        None
        if args.skip_floor
        else bench_floor(args.chain, args.fanout, args.rounds, args.concurrency, args.floor_log_level)
    )
    big = runs = None
    if args.big or args.runs:
        web, base = start_web()
        try:
            key = api_key()
            big = bench_big_dag(base, key, args.big) if args.big else None
            runs = bench_runs_list(base, key, args.runs, args.list_requests) if args.runs else None
        finally:
            web.stop()
    print_table(orch, floor, big, runs)
    print(f"\n(took {time.perf_counter() - started:.0f} s; load average now {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
