"""Real processes for tests: Celery workers and ASGI servers pointed at the test database.

Tests that use them need committed data (`transactional_db`), since the processes have their own
database connections.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
LOG_DIR = ROOT / "var" / "test-logs"


def wait_for(
    predicate: Callable[[], Any], *, timeout: float = 20.0, interval: float = 0.05, what: str = "condition"
) -> Any:
    """Polls until `predicate()` is truthy; returns its value. Fails the test with `what` on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def database_url(settings_dict: dict[str, Any]) -> str:
    user = settings_dict.get("USER") or "postgres"
    password = f":{settings_dict['PASSWORD']}" if settings_dict.get("PASSWORD") else ""
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = settings_dict.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{settings_dict['NAME']}"


class ServiceProcess:
    """A child process in its own process group, with its output in var/test-logs/<name>.log."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], *, user: str | None = None) -> None:
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        self.name = name
        self.log_path = LOG_DIR / f"{name}-{worker}-{os.getpid()}.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            args,
            cwd=ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            user=user,
        )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_text(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Signals the whole group (a Celery worker's pool children included)."""
        if self.alive():
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass

    def stop(self, timeout: float = 10.0) -> None:
        if self.alive():
            self.kill(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill(signal.SIGKILL)
                self.proc.wait(timeout=5)
        self._log.close()


def child_env(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def start_celery_worker(
    *,
    name: str,
    app: str,
    queues: list[str],
    env: dict[str, str],
    concurrency: int = 2,
    extra_args: list[str] | None = None,
) -> ServiceProcess:
    args = [
        sys.executable, "-m", "celery", "-A", app, "worker",
        "-Q", ",".join(queues), "-c", str(concurrency), "-P", "prefork",
        "-n", f"{name}@%h", "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "INFO",
        *(extra_args or []),
    ]  # fmt: skip
    return ServiceProcess(name, args, child_env(env))


def start_asgi_server(*, name: str, application: str, env: dict[str, str]) -> tuple[ServiceProcess, int]:
    port = free_port()
    args = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), application]
    return ServiceProcess(name, args, child_env(env)), port


def procfile_line(process: str) -> str:
    """`deploy/Procfile`'s command for `process`."""
    for line in (ROOT / "deploy" / "Procfile").read_text().splitlines():
        if line.startswith(f"{process}:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"deploy/Procfile has no {process} line")


def procfile_command(process: str, *, port: int) -> str:
    """`deploy/Procfile`'s command for `process`, listening on `port` instead of its own."""
    command = procfile_line(process)
    replaced, count = re.subn(r"--port \S+", f"--port {port}", command)
    assert count == 1, f"the Procfile's {process} command has no single --port: {command}"
    return replaced


def start_procfile_server(
    process: str,
    *,
    env: dict[str, str],
    health_path: str,
    timeout: float = 120.0,
    ready_statuses: tuple[int, ...] = (200,),
) -> tuple[ServiceProcess, str]:
    """Starts `process` exactly as deploy/Procfile does (through a shell, the project's
    environment first on PATH as an activated venv) on a free port; returns it with its base URL
    once `health_path` answers 200. The caller stops it."""
    port = free_port()
    path = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', os.environ.get('PATH', ''))}"
    command = procfile_command(process, port=port)
    # `env` runs a command that starts with variable assignments (`X=1 daphne ...`) as well.
    server = ServiceProcess(process, ["bash", "-c", f"exec env {command}"], child_env({**env, "PATH": path}))
    base = f"http://127.0.0.1:{port}"
    _wait_ready(server, base, health_path, ready_statuses, timeout)
    return server, base


def _wait_ready(
    server: ServiceProcess, base: str, health_path: str, ready_statuses: tuple[int, ...], timeout: float
) -> None:
    def ready() -> bool:
        if not server.alive():
            raise AssertionError(server.log_text())
        try:
            return httpx.get(f"{base}{health_path}", timeout=1).status_code in ready_statuses
        except httpx.HTTPError:
            return False

    try:
        wait_for(ready, timeout=timeout, what=f"{server.name} to accept connections")
    except BaseException:
        server.stop()
        raise


def start_ready_asgi_server(
    *,
    name: str,
    application: str,
    env: dict[str, str],
    health_path: str,
    ready_statuses: tuple[int, ...] = (200,),
    timeout: float = 60.0,
) -> tuple[ServiceProcess, str]:
    """Starts `application` under daphne and returns it with its base URL once `health_path`
    answers one of `ready_statuses`. The caller stops the process; if it dies or never becomes
    ready, it is stopped here and the test fails with its log."""
    server, port = start_asgi_server(name=name, application=application, env=env)
    base = f"http://127.0.0.1:{port}"
    _wait_ready(server, base, health_path, ready_statuses, timeout)
    return server, base
