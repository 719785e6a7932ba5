"""kill -9 of agents at random moments while they drain task runs with retries.

    python bench/faults/agent_kills.py [--task-runs 1000] [--agents 3] [--seed N]

A private PostgreSQL and Redis, the orchestrator API and N agents (`run_agent`, concurrency 2, each
its own process group). Task runs are DAG runs of independent tasks whose command appends
`<task run id> <attempt> start`, sleeps 0-0.4 s, and appends `... done` to one file. While they
drain, every 2-6 s (random) one agent that has finished starting, picked at random, gets SIGKILL on
its process group and is started again under the same name, up to one kill per 10 task runs;
then the rest drains. Afterwards the database and the file are compared:

- lost: a task run missing, not finished (stuck), completed without its last attempt having run,
  or failed with attempts left;
- run twice: an attempt that started more than once, or an execution of an attempt the database
  never claimed (the claim is one execution per attempt; an attempt cut by a kill is retried as
  the next attempt, so a command may run again, but under a new attempt number).
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.faults.harness import (  # noqa: E402
    TERMINAL,
    Figures,
    OrchStack,
    elapsed,
    environment_note,
    evidence_file,
    executions,
    new_token,
    ok,
    print_table,
    private_services,
)

DAG_SIZE = 50


def command(log: Path, index: int, *, sleeps: bool = True) -> str:
    line = '"$ORCH_TASK_RUN_ID $ORCH_ATTEMPT'
    pause = f"sleep 0.{index % 5}; " if sleeps else ""
    return f'echo {line} start" >> {log}; {pause}echo {line} done" >> {log}'


def define(stack: OrchStack, queue: str, log: Path, size: int, *, sleeps: bool = True) -> str:
    with stack.client() as http:
        for i in range(size):
            task = {"command": command(log, i, sleeps=sleeps), "queue": queue}
            ok(http.put(f"/api/tasks/fk-{i}", json=task))
        ok(
            http.put(
                "/api/dags/fk", json={"tasks": [{"id": f"fk-{i}", "parameters": {}} for i in range(size)]}
            )
        )
    return "fk"


def schedule(stack: OrchStack, dag_id: str, runs: int, retries: int) -> tuple[list[str], int]:
    """Schedules `runs` DAG runs, each with an idempotency key (a retried POST makes one run)."""
    run_ids, server_errors = [], 0
    with stack.client() as http:
        for i in range(runs):
            while True:
                response = http.post("/api/schedule-dag", json={"dag_id": dag_id, "retries": retries},
                                     headers={"Idempotency-Key": f"{stack.token}-{i}"})  # fmt: skip
                if response.status_code >= 500:
                    server_errors += 1
                    continue
                run_ids.append(ok(response, 201)["run_id"])
                break
    return run_ids, server_errors


def task_runs(database_url: str) -> list[tuple[str, str, int, int]]:
    with psycopg.connect(database_url) as conn:
        return conn.execute("SELECT id, status, attempts, max_attempts FROM orch_runs_taskrun").fetchall()


def unfinished(database_url: str) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM orch_runs_taskrun WHERE status <> ALL(%s)", (list(TERMINAL),)
        ).fetchone()
    return int(row[0]) if row else 0


def judge(rows: list[tuple[str, str, int, int]], log: Path, expected: int) -> dict[str, object]:
    lines = executions(log)
    starts = Counter((tr, attempt) for tr, attempt, what in lines if what == "start")
    dones = {(tr, attempt) for tr, attempt, what in lines if what == "done"}
    known = {tr: (status, attempts, max_attempts) for tr, status, attempts, max_attempts in rows}
    stuck = sum(1 for status, _, _ in known.values() if status not in TERMINAL)
    phantom = sum(1 for tr, (status, attempts, _) in known.items()
                  if status == "completed" and (tr, attempts) not in dones)  # fmt: skip
    gave_up = sum(1 for status, attempts, most in known.values() if status == "failed" and attempts < most)
    exhausted = sum(1 for status, attempts, most in known.values() if status == "failed" and attempts >= most)
    twice = sum(1 for count in starts.values() if count > 1)
    unclaimed = sum(1 for tr, attempt in starts if tr not in known or attempt > known[tr][1])
    return {
        "task runs": expected,
        "executions": sum(starts.values()),
        "retried attempts": sum(1 for _, attempt in starts if attempt > 1),
        "lost": (expected - len(known)) + stuck + phantom + gave_up,
        "stuck": stuck,
        "run twice": twice + unclaimed,
        "failed (retries used up)": exhausted,
    }


def run(*, task_runs_total: int = 1000, agents: int = 3, retries: int = 5, kill_every: tuple[float, float] = (2.0, 6.0),
        seed: int | None = None, timeout: float = 1800) -> Figures:  # fmt: skip
    rng = random.Random(seed)
    started = time.monotonic()
    runs = max(1, task_runs_total // DAG_SIZE)
    size = min(DAG_SIZE, task_runs_total)
    log = evidence_file()
    with private_services() as (pg, redis):
        stack = OrchStack(pg, redis, token=new_token())
        try:
            stack.migrate()
            stack.start_api()
            queue = f"kills-{stack.token}"
            dag_id = define(stack, queue, log, size)
            _, server_errors = schedule(stack, dag_id, runs, retries)
            names = [f"ka{i}" for i in range(agents)]
            for name in names:
                stack.start_agent(name, queue)
            kills, max_kills = 0, max(2, task_runs_total // 10)
            deadline = time.monotonic() + timeout
            next_kill = time.monotonic() + rng.uniform(*kill_every)
            while unfinished(stack.database_url) and time.monotonic() < deadline:
                # Only an agent that finished starting is killed: one killed while still starting
                # holds no work, and on a loaded machine starting takes longer than the interval.
                working = [n for n in names if "ready." in stack.agents[n].log_text()]
                if time.monotonic() >= next_kill and working and kills < max_kills:
                    victim = rng.choice(working)
                    stack.kill_agent(victim)
                    kills += 1
                    stack.start_agent(victim, queue)
                    next_kill = time.monotonic() + rng.uniform(*kill_every)
                time.sleep(0.2)
            figures = judge(task_runs(stack.database_url), log, runs * size)
        finally:
            stack.stop()
            shutil.rmtree(log.parent, ignore_errors=True)
    return Figures("agent kill -9", {"agents": agents, "kills": kills, **figures, "API 5xx": server_errors,
                                     "time": elapsed(started)})  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--task-runs", type=int, default=1000)
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--retries", type=int, default=5)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    figures = run(task_runs_total=args.task_runs, agents=args.agents, retries=args.retries, seed=args.seed)
    print(f"({environment_note()})")
    print_table([figures])


if __name__ == "__main__":
    main()
