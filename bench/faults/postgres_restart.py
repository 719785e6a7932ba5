"""PostgreSQL killed and started again under API load, on both services.

    python bench/faults/postgres_restart.py [--restarts 5] [--down-seconds 3]

A private PostgreSQL cluster (the shared server is never touched) and redis-server; the case
service's and the orchestrator's APIs under daphne. Four client threads write all the time: two
create cases (POST /cases), two schedule task runs (POST /api/schedule-task with an
Idempotency-Key). Each restart: once both services acknowledged new writes, the postmaster and
every backend get SIGKILL (a crash); the clients keep sending for `down` seconds; then PostgreSQL
starts again (recovering from its write-ahead log) and the script waits until both services
acknowledge writes again, by themselves. Afterwards every acknowledged id (a 2xx with an id) is
looked up in the database. The case worker (`manage_case.py run_worker`) and the case beat run
beside them (the beat sends the connector sweep every second); after each restart the worker must
run a task again, and both must be the same processes at the end.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import httpx
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.faults.harness import (  # noqa: E402
    Figures,
    OrchStack,
    elapsed,
    environment_note,
    new_token,
    ok,
    print_table,
    private_services,
)
from bench.faults.services import CaseStack, Load, Tally, ok_while_down  # noqa: E402
from tests.support.processes import wait_for  # noqa: E402


def missing(database_url: str, table: str, column: str, ids: list[str]) -> int:
    with psycopg.connect(database_url) as conn:
        found = {str(row[0]) for row in conn.execute(f"SELECT {column} FROM {table}").fetchall()}  # noqa: S608
    return sum(1 for i in ids if i not in found)


def acked_since(load: Load, moment: float) -> bool:
    return all(t.last_ok > moment for t in load.tallies.values())


def figures_for(name: str, tally: Tally, lost: int, restarts: int, recovery: float) -> Figures:
    server_errors = sum(n for status, n in tally.statuses.items() if status >= 500)
    return Figures(name, {
        "requests": sum(tally.statuses.values()) + tally.no_answer,
        "acknowledged": len(tally.acked),
        "restarts": restarts,
        "lost": lost,
        "duplicated": len(tally.acked) - len(set(tally.acked)),
        "2xx while down": ok_while_down(tally),
        "503 while down": tally.during_outage.get(503, 0),
        "5xx other than 503": server_errors - tally.statuses.get(503, 0),
        "no answer": tally.no_answer,
        "slowest recovery": f"{recovery:.1f} s",
    })  # fmt: skip


def run(*, restarts: int = 5, down_seconds: float = 3.0) -> list[Figures]:
    started = time.monotonic()
    with private_services() as (pg, redis):
        token = new_token()
        orch, case = OrchStack(pg, redis, token=token), CaseStack(pg, redis, token=token)
        try:
            orch.migrate()
            case.migrate()
            orch.start_api()
            case.start_api()
            case.start_workers()
            headers = case.login()
            case_type = case.case_type(headers)
            with httpx.Client(base_url=orch.base, timeout=30) as http:
                ok(http.put("/api/tasks/pg-fault", json={"command": "true", "queue": f"nobody-{token}"}))

            def create_case(http: httpx.Client, key: str) -> httpx.Response:
                body = {"caseTypeId": case_type, "data": {"amount": 1}}
                return http.post("/cases", json=body, headers=headers)

            def schedule(http: httpx.Client, key: str) -> httpx.Response:
                return http.post(
                    "/api/schedule-task", json={"task_id": "pg-fault"}, headers={"Idempotency-Key": key}
                )

            slowest, worker_back = 0.0, 0.0
            with Load(
                {"case service": (case.base, create_case), "orchestrator": (orch.base, schedule)}
            ) as load:
                for _ in range(restarts):
                    mark = time.monotonic()
                    wait_for(lambda m=mark: acked_since(load, m), timeout=120, what="writes acknowledged")
                    pg.kill()
                    load.outage.set()
                    down_until = time.monotonic() + down_seconds
                    wait_for(
                        lambda u=down_until: time.monotonic() > u, timeout=down_seconds + 5, interval=0.1
                    )
                    pg.start()
                    load.outage.clear()
                    back = time.monotonic()
                    wait_for(
                        lambda b=back: acked_since(load, b), timeout=120, what="both services to recover"
                    )
                    slowest = max(slowest, max(t.last_ok for t in load.tallies.values()) - back)
                    worker_back = max(worker_back, case.wait_worker_progress())
            tallies = load.tallies
            lost_cases = missing(case.database_url, "cases_case", "id", tallies["case service"].acked)
            lost_runs = missing(orch.database_url, "orch_runs_run", "run_id", tallies["orchestrator"].acked)
            workers = case.workers_survived()
        finally:
            case.stop()
            orch.stop()
    rows = [
        figures_for(
            "PostgreSQL restart: case service", tallies["case service"], lost_cases, restarts, slowest
        ),
        figures_for(
            "PostgreSQL restart: orchestrator", tallies["orchestrator"], lost_runs, restarts, slowest
        ),
    ]
    rows[0].values.update({**workers, "case worker back within": f"{worker_back:.1f} s"})
    rows[0].values["time"] = rows[1].values["time"] = elapsed(started)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--restarts", type=int, default=5)
    parser.add_argument("--down-seconds", type=float, default=3.0)
    args = parser.parse_args()
    rows = run(restarts=args.restarts, down_seconds=args.down_seconds)
    print(f"({environment_note()})")
    print_table(rows)


if __name__ == "__main__":
    main()
