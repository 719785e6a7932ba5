"""Redis killed and started again (empty: no persistence) under load, on both services.

    python bench/faults/redis_restart.py [--restarts 3] [--down-seconds 3]

A private PostgreSQL and redis-server. The orchestrator's API and two agents (one also on the
control queue, where webhook deliveries go); a webhook on `task.completed` to a local receiver that
counts deliveries by their id. The case service's API. Two client threads schedule task runs (each
command appends `<task run id> <attempt> start|done` to a file), two create cases. Before the
restarts a case-service token is revoked (logout) and an account locked (6 failed logins).

Each restart: once both services acknowledged writes, redis-server gets SIGKILL, so every queued
Celery message is gone; the clients keep sending for `down` seconds; Redis starts again, empty.
The case worker (`manage_case.py run_worker`) and the case beat run beside them, the beat sending
the connector sweep every second; after each restart the worker must run a task again. Afterwards
the agents, the case worker and the case beat must be the same processes, every task run must have completed with each
attempt executed once, every webhook delivery must have reached the receiver exactly once, every
acknowledged case must exist, the revoked token must still fail and the account still be locked,
and no answer may have been a 5xx other than 503.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.faults.agent_kills import judge, task_runs  # noqa: E402
from bench.faults.harness import (  # noqa: E402
    TERMINAL,
    Figures,
    OrchStack,
    elapsed,
    environment_note,
    evidence_file,
    new_token,
    ok,
    print_table,
    private_services,
)
from bench.faults.postgres_restart import acked_since, missing  # noqa: E402
from bench.faults.services import PASSWORD, CaseStack, Load, ok_while_down  # noqa: E402
from tests.support.processes import wait_for  # noqa: E402


class Receiver(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with self.server.lock:  # type: ignore[attr-defined]
            self.server.seen[self.headers.get("X-Service-Delivery", "")] += 1  # type: ignore[attr-defined]
        self.send_response(204)
        self.end_headers()


def start_receiver() -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    server.seen, server.lock = Counter(), threading.Lock()  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def settled(database_url: str) -> bool:
    """Every task run finished and every webhook delivery settled (delivered or given up)."""
    with psycopg.connect(database_url) as conn:
        runs = conn.execute(
            "SELECT count(*) FROM orch_runs_taskrun WHERE status <> ALL(%s)", (list(TERMINAL),)
        )
        open_runs = runs.fetchone()
        pending = conn.execute(
            "SELECT count(*) FROM orch_webhooks_delivery WHERE status IN ('pending', 'delivering')"
        ).fetchone()
        events = conn.execute(
            "SELECT count(*) FROM orch_events_event WHERE type = 'task.completed' AND dispatched_at IS NULL"
        ).fetchone()
    return (open_runs, pending, events) == ((0,), (0,), (0,))


def delivery_rows(database_url: str) -> list[tuple[str, str]]:
    with psycopg.connect(database_url) as conn:
        return [
            (str(i), s) for i, s in conn.execute("SELECT id, status FROM orch_webhooks_delivery").fetchall()
        ]


def security_state(case: CaseStack) -> tuple[dict[str, str], dict[str, str], str]:
    """A token that stays valid, a revoked one, and a locked email."""
    keep, revoked = case.login(), case.login()
    locked = f"locked-{case.token}@fault.test"
    with httpx.Client(base_url=case.base, timeout=30) as http:
        ok(http.post("/auth/logout", headers=revoked), 200, 204)
        for _ in range(6):
            http.post("/auth/login", json={"email": locked, "password": "wrong-password-000"})
    return keep, revoked, locked


def security_held(
    case: CaseStack, keep: dict[str, str], revoked: dict[str, str], locked: str
) -> dict[str, bool]:
    with httpx.Client(base_url=case.base, timeout=30) as http:
        return {
            "valid token works": http.get("/cases", headers=keep).status_code == 200,
            "revoked token refused": http.get("/cases", headers=revoked).status_code == 401,
            "locked account refused": http.post(
                "/auth/login", json={"email": locked, "password": PASSWORD}
            ).status_code
            == 429,
        }


def run(*, restarts: int = 3, down_seconds: float = 3.0, timeout: float = 600) -> list[Figures]:
    started = time.monotonic()
    log = evidence_file()
    receiver = start_receiver()
    with private_services() as (pg, redis):
        token = new_token()
        orch, case = OrchStack(pg, redis, token=token), CaseStack(pg, redis, token=token)
        try:
            orch.migrate()
            case.migrate()
            orch.start_api()
            case.start_api()
            case.start_workers()
            queue = f"redis-{token}"
            line = '"$ORCH_TASK_RUN_ID $ORCH_ATTEMPT'
            command = f'echo {line} start" >> {log}; echo {line} done" >> {log}'
            with orch.client() as http:
                ok(http.put("/api/tasks/rd", json={"command": command, "queue": queue}))
                ok(http.post("/api/webhooks", json={"name": "faults", "url": f"http://127.0.0.1:{receiver.server_port}/hook",
                                                    "events": ["task.completed"], "secret": "s3cret-for-faults"}))  # fmt: skip
            agents = [orch.start_agent("rd0", queue, control=True), orch.start_agent("rd1", queue)]
            for agent in agents:
                orch.wait_ready(agent)
            pids = [agent.proc.pid for agent in agents]
            headers = case.login()
            case_type = case.case_type(headers)
            keep, revoked, locked = security_state(case)

            def create_case(http: httpx.Client, key: str) -> httpx.Response:
                return http.post(
                    "/cases", json={"caseTypeId": case_type, "data": {"amount": 1}}, headers=keep
                )

            def schedule(http: httpx.Client, key: str) -> httpx.Response:
                body = {"task_id": "rd", "retries": 3}
                return http.post("/api/schedule-task", json=body, headers={"Idempotency-Key": key})

            worker_back = 0.0
            with Load(
                {"case service": (case.base, create_case), "orchestrator": (orch.base, schedule)}
            ) as load:
                for _ in range(restarts):
                    mark = time.monotonic()
                    wait_for(lambda m=mark: acked_since(load, m), timeout=120, what="writes acknowledged")
                    redis.kill()
                    load.outage.set()
                    down_until = time.monotonic() + down_seconds
                    wait_for(
                        lambda u=down_until: time.monotonic() > u, timeout=down_seconds + 5, interval=0.1
                    )
                    redis.start()
                    load.outage.clear()
                    back = time.monotonic()
                    wait_for(
                        lambda b=back: acked_since(load, b), timeout=120, what="both services to recover"
                    )
                    worker_back = max(worker_back, case.wait_worker_progress())
            wait_for(lambda: settled(orch.database_url), timeout=timeout, interval=0.5,
                     what="task runs and webhook deliveries to settle")  # fmt: skip
            survived = sum(
                1 for agent, pid in zip(agents, pids, strict=True) if agent.alive() and agent.proc.pid == pid
            )
            rows_now = task_runs(orch.database_url)
            runs = judge(rows_now, log, len(rows_now))
            runs["lost"] += missing(
                orch.database_url, "orch_runs_run", "run_id", load.tallies["orchestrator"].acked
            )
            rows = delivery_rows(orch.database_url)
            held = security_held(case, keep, revoked, locked)
            lost_cases = missing(case.database_url, "cases_case", "id", load.tallies["case service"].acked)
            workers = case.workers_survived()
        finally:
            case.stop()
            orch.stop()
            receiver.shutdown()
            shutil.rmtree(log.parent, ignore_errors=True)
    seen = receiver.seen  # type: ignore[attr-defined]
    tallies = load.tallies
    five = {n: sum(c for s, c in t.statuses.items() if s >= 500 and s != 503) for n, t in tallies.items()}
    return [
        Figures("Redis restart: orchestrator task runs", {
            "restarts": restarts, "acknowledged": len(tallies["orchestrator"].acked), "executions": runs["executions"],
            "lost": runs["lost"], "duplicated": runs["run twice"], "agents survived": f"{survived}/{len(agents)}",
            "2xx while down": ok_while_down(tallies["orchestrator"]), "503 while down": tallies["orchestrator"].during_outage.get(503, 0), "5xx other than 503": five["orchestrator"],
        }),
        Figures("Redis restart: orchestrator webhook deliveries", {
            "restarts": restarts, "acknowledged": len(rows),
            "lost": sum(1 for i, s in rows if s != "succeeded" or seen[i] == 0),
            "duplicated": sum(1 for i, _ in rows if seen[i] > 1),
        }),
        Figures("Redis restart: case service", {
            "restarts": restarts, "acknowledged": len(tallies["case service"].acked), "lost": lost_cases,
            "duplicated": len(tallies["case service"].acked) - len(set(tallies["case service"].acked)),
            "2xx while down": ok_while_down(tallies["case service"]),
            "503 while down": tallies["case service"].during_outage.get(503, 0),
            "5xx other than 503": five["case service"],
            "security state kept": "yes" if all(held.values()) else f"no: {held}",
            **workers, "case worker back within": f"{worker_back:.1f} s",
            "time": elapsed(started),
        }),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--restarts", type=int, default=3)
    parser.add_argument("--down-seconds", type=float, default=3.0)
    args = parser.parse_args()
    rows = run(restarts=args.restarts, down_seconds=args.down_seconds)
    print(f"({environment_note()})")
    print_table(rows)


if __name__ == "__main__":
    main()
