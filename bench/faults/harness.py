"""What every fault script shares: a private PostgreSQL cluster and redis-server (so killing them
harms nobody else), the orchestrator's processes on them, and the result table.

The scripts are run as commands (`python bench/faults/<name>.py`) and, with small sizes, by the
tests in tests/orchestrator/faults/ and tests/casemgmt/faults/.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.postgres_server import PrivatePostgres  # noqa: E402
from tests.support.processes import (  # noqa: E402
    ServiceProcess,
    child_env,
    start_ready_asgi_server,
    wait_for,
)
from tests.support.redis_server import PrivateRedis  # noqa: E402

TERMINAL = ("completed", "failed", "cancelled")

# Fast recovery: an agent is declared dead 3 s after its last heartbeat, and the agents' own
# sweep looks every half second (production: 30 s and 5 s; the logic is the same).
FAST_RECOVERY = {
    "ORCH_AGENT_HEARTBEAT_SECONDS": "1",
    "ORCH_AGENT_STALE_SECONDS": "3",
    "ORCH_SWEEP_INTERVAL_SECONDS": "0.5",
    "ORCH_TASK_CANCEL_POLL_SECONDS": "0.5",
    "ORCH_TASK_LOG_FLUSH_SECONDS": "0.5",
    # An agent whose Celery worker stops on its own error (kombu loses its broker connection badly
    # when Redis dies) restarts itself in place, unless it had run for less than this (production:
    # 10 s, a guard against restart loops on bad settings; such an agent exits for its supervisor).
    "ORCH_AGENT_RESTART_MIN_UPTIME_SECONDS": "2",
}


@dataclass
class Figures:
    """One line of a result table."""

    name: str
    values: dict[str, object] = field(default_factory=dict)


def print_table(rows: Iterable[Figures]) -> None:
    rows = list(rows)
    columns = ["scenario", *dict.fromkeys(k for row in rows for k in row.values)]
    cells = [[row.name, *(str(row.values.get(c, "")) for c in columns[1:])] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    print(" | ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)))
    print("-+-".join("-" * w for w in widths))
    for r in cells:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


class OrchStack:
    """The orchestrator on a private PostgreSQL and Redis: one API process and any number of agents,
    each a real process group to kill."""

    def __init__(
        self, pg: PrivatePostgres, redis: PrivateRedis, *, token: str, db_host: str = "127.0.0.1"
    ) -> None:
        self.pg = pg
        self.redis = redis
        self.token = token
        self.database_url = pg.create_database(f"orch_{token}")
        self.env = {
            "DJANGO_SETTINGS_MODULE": "orchestrator.config.settings.test",
            "ORCH_DATABASE_URL": self.database_url,
            "ORCH_REDIS_URL": redis.url,
            "TEST_RUN_TOKEN": f"fault{token}",
            "PYTEST_XDIST_WORKER": "",
            "ORCH_LOG_LEVEL": "WARNING",
            **FAST_RECOVERY,
        }
        self.api: ServiceProcess | None = None
        self.base = ""
        self.agents: dict[str, ServiceProcess] = {}

    def migrate(self) -> None:
        subprocess.run([sys.executable, "manage_orch.py", "migrate", "-v", "0"], cwd=ROOT,
                       env=child_env(self.env), check=True)  # fmt: skip

    def start_api(self) -> str:
        self.api, self.base = start_ready_asgi_server(
            name=f"fault-orch-api-{self.token}",
            application="orchestrator.config.asgi:application",
            env=self.env,
            health_path="/api/health",
        )
        return self.base

    def start_agent(
        self,
        name: str,
        queue: str,
        *,
        concurrency: int = 2,
        env: dict[str, str] | None = None,
        wrapper: list[str] | None = None,
        control: bool = False,
    ) -> ServiceProcess:
        """`wrapper` runs the agent inside something (`ip netns exec <ns>`); `env` overrides the
        stack's (a namespace reaches the databases at another address)."""
        args = [*(wrapper or []), sys.executable, "manage_orch.py", "run_agent", "--queues", queue,
                "--name", name, "--concurrency", str(concurrency), *([] if control else ["--no-control"])]  # fmt: skip
        proc = ServiceProcess(
            f"fault-{name}", args, child_env({**self.env, "ORCH_LOG_LEVEL": "INFO", **(env or {})})
        )
        self.agents[name] = proc
        return proc

    def wait_ready(self, proc: ServiceProcess, timeout: float = 120) -> None:
        wait_for(lambda: "ready." in proc.log_text() or not proc.alive(), timeout=timeout, interval=0.2,
                 what=f"{proc.name} ready")  # fmt: skip
        if not proc.alive():
            raise RuntimeError(f"{proc.name} died:\n{proc.log_text()[-3000:]}")

    def kill_agent(self, name: str) -> None:
        """kill -9 of the agent's process group (main process and Celery pool children)."""
        proc = self.agents[name]
        proc.kill(signal.SIGKILL)
        proc.proc.wait(timeout=20)
        proc.stop()

    def stop(self) -> None:
        for proc in self.agents.values():
            proc.stop()
        if self.api is not None:
            self.api.stop()

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.base, timeout=60)


def ok(response: httpx.Response, *statuses: int) -> dict:
    if response.status_code not in (statuses or (200, 201)):
        raise RuntimeError(
            f"{response.request.method} {response.request.url}: {response.status_code} {response.text}"
        )
    return response.json() if response.content else {}


def new_token() -> str:
    return uuid.uuid4().hex[:8]


@contextmanager
def private_services(
    listen: tuple[str, ...] = ("127.0.0.1",),
) -> Iterator[tuple[PrivatePostgres, PrivateRedis]]:
    pg = PrivatePostgres(listen)
    redis = PrivateRedis(bind=listen)
    try:
        pg.start()
        redis.start()
        yield pg, redis
    finally:
        redis.stop()
        pg.remove()


def evidence_file() -> Path:
    """Where the commands append their lines: a fresh directory, removed by the script at the end."""
    return Path(tempfile.mkdtemp(prefix="faults-")) / "executions.log"


def executions(path: Path) -> list[tuple[str, int, str]]:
    """Lines `<task_run_id> <attempt> <start|done>` appended by the commands (O_APPEND: a short
    line is written whole even when commands on several hosts append at once)."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 3:
            out.append((parts[0], int(parts[1]), parts[2]))
    return out


def elapsed(start: float) -> str:
    return f"{time.monotonic() - start:.0f} s"


def environment_note() -> str:
    return f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
