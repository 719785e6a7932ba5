"""The run's counter of unfinished task runs under the worst contention it can meet: many
connections completing task runs of one run as fast as they can, no commands in between.

Each completion decrements the counter's row (`orch_runs_runprogress`) and keeps that row locked
until its COMMIT, so the completions of one run pass the row one WAL flush at a time. This measures
what that costs against the statement it replaced (the same completion with, instead of the
decrement, a probe of the run's pending, queued, failed and cancelled task runs), on one run of
N queued task runs (a fan-out), each claimed and completed by one of C processes, each with its
own connection: the agent's two statements (the claim, the leaf completion), without the command
in between, so the completions come as fast as the database allows:

- task runs per second (wall time, all processes), and their ratio to the probe's;
- the PostgreSQL backends' CPU per task run, claim and completion (from /proc);
- how often a completion waited on a lock (sampled `pg_stat_activity`, indicative).

    .venv/bin/python bench/orch_counter_contention.py [--tasks 4000] [--conns 4] [--rounds 3]

Database: ORCH_PROFILE_DATABASE_URL (default orch_profile, created and migrated when missing).
The probe statement is kept here, as it was before the counter, only to compare the two.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from benchlib import ensure_database, proc_cpu  # noqa: E402
from orch_profile import DB_URL  # noqa: E402 - sets the environment first

PROBE_SQL = """
WITH done AS (
    UPDATE orch_runs_taskrun SET status = 'completed', end_time = %(now)s, exit_code = 0
     WHERE id = %(id)s AND status = 'running' AND attempts = %(attempt)s
    RETURNING id
), event AS (
    INSERT INTO orch_events_event (type, occurred_at, run_id, dag_id, task_id, data, dispatched_at)
    SELECT 'task.completed', %(now)s, %(run)s, %(dag)s, %(task)s, %(data)s::jsonb, %(now)s FROM done
)
SELECT EXISTS (SELECT 1 FROM done),
       EXISTS (SELECT 1 FROM orch_runs_taskrun
                WHERE run_id = %(run)s AND status IN ('pending', 'queued', 'failed', 'cancelled'))
"""


def setup_run(count: int) -> tuple[str, list[str]]:
    from orchestrator.runs.models import Run, RunProgress, TaskRun
    from shared.api.time import now_ms

    run_id = f"contention_{uuid.uuid4().hex[:8]}"
    now = now_ms()
    run = Run.objects.create(run_id=run_id, dag_id="contention", status="running", start_time=now)
    RunProgress.objects.create(run=run, unfinished=count)
    ids = [f"c{i}_{uuid.uuid4().hex[:8]}" for i in range(count)]
    TaskRun.objects.bulk_create(
        [
            TaskRun(
                id=pk,
                run=run,
                task_id=pk.split("_")[0],
                command="true",
                queue="contention",
                has_dependents=False,
                status="queued",
                queued_at=now,
            )
            for pk in ids
        ],
        batch_size=1000,
    )
    return run_id, ids


def worker(sql: str, run_id: str, ids: list[str], start, finished, pids) -> None:
    import psycopg

    from orchestrator.runs.claim import FAST_CLAIM_SQL
    from shared.api.time import iso, now_ms

    with psycopg.connect(DB_URL, autocommit=True) as conn:
        pids.put(conn.info.backend_pid)
        start.wait()
        for pk in ids:
            now = now_ms()
            claim = {
                "agent": "contention",
                "session": None,
                "now": now,
                "now_iso": iso(now),
                "id": pk,
                "attempt": 0,
            }
            assert conn.execute(FAST_CLAIM_SQL, claim, prepare=True).fetchone(), pk
            now = now_ms()
            data = {"run_id": run_id, "task_run_id": pk, "status": "completed", "end_time": iso(now)}
            params = {"now": now, "id": pk, "attempt": 1, "run": run_id, "dag": "contention",
                      "task": pk.split("_")[0], "data": json.dumps(data), "counted_run": run_id}  # fmt: skip
            row = conn.execute(sql, params, prepare=True).fetchone()
            assert row[0], pk
        finished.wait()  # all done: the backends' CPU is read before they exit
        finished.wait()


def sample_waits(stop, out, datname: str) -> None:
    import psycopg

    waits = samples = 0
    with psycopg.connect(DB_URL, autocommit=True) as conn:
        while not stop.is_set():
            n = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND wait_event_type = 'Lock'",
                [datname],
            ).fetchone()[0]
            waits += n
            samples += 1
            time.sleep(0.002)
    out.put((waits, samples))


def measure(variant: str, count: int, conns: int) -> dict:
    from orchestrator.runs.completion import LEAF_COMPLETE_SQL
    from orchestrator.runs.models import RunProgress

    sql = LEAF_COMPLETE_SQL if variant == "counter" else PROBE_SQL
    run_id, ids = setup_run(count)
    ctx = multiprocessing.get_context("fork")
    start, finished = ctx.Barrier(conns + 1), ctx.Barrier(conns + 1)
    pids, stop, waits = ctx.Queue(), ctx.Event(), ctx.Queue()
    from django.db import connections

    connections.close_all()  # not shared with the forked processes
    procs = [
        ctx.Process(target=worker, args=(sql, run_id, ids[i::conns], start, finished, pids))
        for i in range(conns)
    ]
    for p in procs:
        p.start()
    backends = [pids.get(timeout=30) for _ in procs]
    sampler = ctx.Process(target=sample_waits, args=(stop, waits, DB_URL.rsplit("/", 1)[1]))
    sampler.start()
    cpu0 = sum(proc_cpu(pid) for pid in backends)
    start.wait()
    t0 = time.perf_counter()
    finished.wait()
    wall = time.perf_counter() - t0
    cpu = sum(proc_cpu(pid) for pid in backends) - cpu0
    finished.wait()
    for p in procs:
        p.join()
    stop.set()
    waited, samples = waits.get(timeout=30)
    sampler.join()
    if variant == "counter":
        assert RunProgress.objects.get(run_id=run_id).unfinished == 0
    return {"rate": count / wall, "cpu_ms": cpu * 1000 / count, "waiting": waited / max(samples, 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=4000)
    parser.add_argument("--conns", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import django

    django.setup()
    ensure_database(DB_URL)
    print(
        f"load average {os.getloadavg()[0]:.1f}; {args.tasks} task runs of one run, {args.conns} connections"
    )
    results: dict[str, list[dict]] = {"probe": [], "counter": []}
    for r in range(args.rounds):
        for variant in ("probe", "counter"):  # alternating, so a change of load hits both
            res = measure(variant, args.tasks, args.conns)
            results[variant].append(res)
            print(f"  round {r + 1} {variant:8s} {res['rate']:7.0f} task runs/s, backend CPU "
                  f"{res['cpu_ms']:.3f} ms each, mean backends waiting on a lock {res['waiting']:.2f}", flush=True)  # fmt: skip
    probe = statistics.fmean(r["rate"] for r in results["probe"])
    counter = statistics.fmean(r["rate"] for r in results["counter"])
    print(f"mean: probe {probe:.0f}/s, counter {counter:.0f}/s ({counter / probe:.2f}x); backend CPU probe "
          f"{statistics.fmean(r['cpu_ms'] for r in results['probe']):.3f} ms, counter "
          f"{statistics.fmean(r['cpu_ms'] for r in results['counter']):.3f} ms per task run")  # fmt: skip


if __name__ == "__main__":
    main()
