"""Both services as real processes: the orchestrator (daphne, its control worker, one agent) on
its own fresh test database, and the case service (daphne, a worker on a private `dag` queue) on
the case test database. Session-scoped: starting them is the slow part."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
import psycopg
import pytest

from tests.support.processes import (
    ROOT,
    ServiceProcess,
    child_env,
    start_asgi_server,
    start_celery_worker,
    wait_for,
)

DAG_QUEUE = f"case.dags-{uuid.uuid4().hex[:6]}"


@dataclass
class Stack:
    orch_url: str
    orch_key: str
    case_url: str

    def orch(self, method: str, path: str, body=None) -> httpx.Response:
        return httpx.request(
            method, self.orch_url + path, json=body, headers={"X-API-Key": self.orch_key}, timeout=10
        )


def _fresh_database(subprocess_env: dict[str, str]) -> str:
    """A database of the orchestrator's own, next to the case test database (same server)."""
    case_url = urlsplit(subprocess_env["CASE_DATABASE_URL"])
    name = f"{case_url.path.lstrip('/')}_orch"
    admin = case_url._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return case_url._replace(path=f"/{name}").geturl()


def _manage_orch(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage_orch.py", *args], cwd=ROOT, env=child_env(env),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _ready(server: ServiceProcess, url: str) -> None:
    def up() -> bool:
        if not server.alive():
            raise AssertionError(server.log_text())
        try:
            return httpx.get(url, timeout=1).status_code < 500
        except httpx.HTTPError:
            return False

    wait_for(up, timeout=60, what=f"{server.name} to accept connections")


@pytest.fixture(scope="session")
def stack(subprocess_env):
    orch_env = {
        "DJANGO_SETTINGS_MODULE": "orchestrator.config.settings.test",
        # Its own Redis prefix: these agents never take task runs of an orchestrator suite's agents.
        "TEST_RUN_TOKEN": f"{os.environ.get('TEST_RUN_TOKEN', '')}dags{uuid.uuid4().hex[:6]}",
        "ORCH_DATABASE_URL": _fresh_database(subprocess_env),
        "ORCH_WEBHOOK_ALLOW_PRIVATE_TARGETS": "1",
        "ORCH_AGENT_HEARTBEAT_SECONDS": "1",
        "ORCH_TASK_LOG_FLUSH_SECONDS": "0.2",
        "ORCH_WEBHOOK_DISPATCH_INTERVAL_SECONDS": "0.5",
    }
    _manage_orch(orch_env, "migrate", "--noinput")
    key = _manage_orch(orch_env, "create_api_key", "--name", "case-service", "--role", "admin")
    case_env = {
        **subprocess_env,
        "CASE_DAG_QUEUE": DAG_QUEUE,
        "CASE_CONNECTOR_ALLOWED_HOSTS": "127.0.0.1",
    }
    procs: list[ServiceProcess] = []
    try:
        orch_server, orch_port = start_asgi_server(
            name="orch-asgi", application="orchestrator.config.asgi:application", env=orch_env
        )
        procs.append(orch_server)
        # With beat: the orchestrator dispatches its webhook outbox periodically (every 0.5 s here).
        beat_file = ROOT / "var" / f"orch-beat-{DAG_QUEUE}"
        procs.append(start_celery_worker(
            name="orch-control", app="orchestrator.config", queues=["orch.control"], env=orch_env,
            extra_args=["-B", "-s", str(beat_file)],
        ))  # fmt: skip
        agent_args = [sys.executable, "manage_orch.py", "run_agent", "--queues", "default",
                      "--name", f"agent-{DAG_QUEUE}", "--concurrency", "2", "--no-control"]  # fmt: skip
        procs.append(ServiceProcess("orch-agent", agent_args, child_env(orch_env)))
        case_server, case_port = start_asgi_server(
            name="case-asgi-dags", application="casemgmt.config.asgi:application", env=case_env
        )
        procs.append(case_server)
        procs.append(
            start_celery_worker(name="case-dags", app="casemgmt.config", queues=[DAG_QUEUE], env=case_env)
        )
        stack = Stack(f"http://127.0.0.1:{orch_port}", key, f"http://127.0.0.1:{case_port}")
        _ready(orch_server, f"{stack.orch_url}/api/health")
        _ready(case_server, f"{stack.case_url}/healthz")
        wait_for(lambda: "ready." in procs[2].log_text() or not procs[2].alive(), timeout=60, what="agent")
        assert procs[2].alive(), procs[2].log_text()
        yield stack
    finally:
        for proc in reversed(procs):
            proc.stop()
