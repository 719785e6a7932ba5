"""The case service's API on a private PostgreSQL and Redis, beside
harness.OrchStack, and the write load the PostgreSQL and Redis restart scripts put on both."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.faults.harness import ROOT, ok
from tests.support.postgres_server import PrivatePostgres
from tests.support.processes import ServiceProcess, child_env, start_ready_asgi_server, wait_for
from tests.support.redis_server import PrivateRedis

PASSWORD = "fault-password-not-secret-42"
Send = Callable[[httpx.Client, str], httpx.Response]  # (client, a fresh idempotency key) -> answer
SCHEMA = {"type": "object", "properties": {"amount": {"type": "number"}}}


class CaseStack:
    def __init__(self, pg: PrivatePostgres, redis: PrivateRedis, *, token: str) -> None:
        self.token = token
        self.database_url = pg.create_database(f"case_{token}")
        self.env = {
            "DJANGO_SETTINGS_MODULE": "casemgmt.config.settings.test",
            "CASE_DATABASE_URL": self.database_url,
            "CASE_REDIS_URL": redis.url,
            "TEST_RUN_TOKEN": f"fault{token}",
            "PYTEST_XDIST_WORKER": "",
            "CASE_LOG_LEVEL": "WARNING",
        }
        self.api: ServiceProcess | None = None
        self.worker: ServiceProcess | None = None
        self.beat: ServiceProcess | None = None
        self.pids: tuple[int, int] = (0, 0)
        self.base = ""
        self.email = f"admin-{token}@fault.test"

    def migrate(self) -> None:
        run = [sys.executable, "manage_case.py"]
        subprocess.run([*run, "migrate", "-v", "0"], cwd=ROOT, env=child_env(self.env), check=True)
        subprocess.run([*run, "create_tenant", "--name", f"Faults {self.token}", "--admin-email", self.email,
                        "--admin-password", PASSWORD], cwd=ROOT, env=child_env(self.env), check=True,
                       capture_output=True)  # fmt: skip

    def start_api(self) -> str:
        self.api, self.base = start_ready_asgi_server(
            name=f"fault-case-api-{self.token}",
            application="casemgmt.config.asgi:application",
            env=self.env,
            health_path="/healthz",
        )
        return self.base

    def login(self) -> dict[str, str]:
        with httpx.Client(base_url=self.base, timeout=30) as http:
            body = ok(http.post("/auth/login", json={"email": self.email, "password": PASSWORD}))
        return {"Authorization": f"Bearer {body['token']}"}

    def case_type(self, headers: dict[str, str]) -> str:
        with httpx.Client(base_url=self.base, timeout=30) as http:
            body = ok(http.post("/case-types", headers=headers,
                                json={"key": "fault_claim", "displayName": "Claim", "schema": SCHEMA}))  # fmt: skip
        return body["id"]

    def start_workers(self) -> None:
        """The case worker (`run_worker`, as deploy/Procfile starts it) and the case beat, with the
        connector sweep every second: the beat's messages are the worker's steady work."""
        env = child_env({**self.env, "CASE_LOG_LEVEL": "INFO", "CASE_CONNECTOR_SWEEP_SECONDS": "1"})
        schedule = Path(tempfile.mkdtemp(prefix="case-beat-")) / "schedule"
        self.worker = ServiceProcess(f"fault-case-worker-{self.token}", [sys.executable, "manage_case.py",
                                     "run_worker", "--queues", "case.default", "--concurrency", "2"], env)  # fmt: skip
        self.beat = ServiceProcess(f"fault-case-beat-{self.token}", [sys.executable, "-m", "celery", "-A",
                                   "casemgmt.config", "beat", "-l", "INFO", "-s", str(schedule)], env)  # fmt: skip
        self.pids = (self.worker.proc.pid, self.beat.proc.pid)
        self.wait_worker_progress(timeout=120)

    def tasks_done(self) -> int:
        return self.worker.log_text().count(" succeeded in ") if self.worker else 0

    def wait_worker_progress(self, timeout: float = 120) -> float:
        """Seconds until the worker finished one more task (the beat's sweep) from now."""
        started, before = time.monotonic(), self.tasks_done()
        wait_for(lambda: self.tasks_done() > before, timeout=timeout, interval=0.2,
                 what="the case worker to run a task")  # fmt: skip
        return time.monotonic() - started

    def workers_survived(self) -> dict[str, str]:
        alive = [p is not None and p.alive() and p.proc.pid == pid
                 for p, pid in zip((self.worker, self.beat), self.pids, strict=True)]  # fmt: skip
        restarts = self.worker.log_text().count("starting the case worker again") if self.worker else 0
        return {"case worker survived": f"{'yes' if alive[0] else 'no'} ({restarts} restarts)",
                "case beat survived": "yes" if alive[1] else "no"}  # fmt: skip

    def stop(self) -> None:
        for proc in (self.worker, self.beat, self.api):
            if proc is not None:
                proc.stop()


@dataclass
class Tally:
    """What a load thread saw: answers by status, acknowledged ids, and answers per phase."""

    statuses: Counter = field(default_factory=Counter)
    acked: list[str] = field(default_factory=list)
    no_answer: int = 0
    during_outage: Counter = field(default_factory=Counter)
    last_ok: float = 0.0


class Load:
    """Threads that write through the APIs until stopped, each request with a new idempotency key.
    A request that is not acknowledged is counted, not retried: only 2xx answers promise a write."""

    def __init__(self, writers: dict[str, tuple[str, Send]], threads_per_writer: int = 2) -> None:
        self.writers = writers
        self.tallies = {name: Tally() for name in writers}
        self.outage = threading.Event()
        self.stopped = threading.Event()
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._loop, args=(name,), daemon=True)
                        for name in writers for _ in range(threads_per_writer)]  # fmt: skip

    def _loop(self, name: str) -> None:
        base, send = self.writers[name]
        tally = self.tallies[name]
        with httpx.Client(base_url=base, timeout=15) as http:
            while not self.stopped.is_set():
                key = uuid.uuid4().hex
                try:
                    response = send(http, key)
                except httpx.HTTPError:
                    with self.lock:
                        tally.no_answer += 1
                    continue
                with self.lock:
                    tally.statuses[response.status_code] += 1
                    if self.outage.is_set():
                        tally.during_outage[response.status_code] += 1
                    if response.status_code in (200, 201):
                        body = response.json()
                        tally.acked.append(body.get("id") or body.get("run_id"))
                        tally.last_ok = time.monotonic()
                if response.status_code >= 500:
                    time.sleep(0.05)  # a client's back-off; the outage is what is measured

    def __enter__(self) -> Load:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        for thread in self.threads:
            thread.join(timeout=30)


def ok_while_down(tally: Tally) -> int:
    return sum(n for status, n in tally.during_outage.items() if 200 <= status < 300)
