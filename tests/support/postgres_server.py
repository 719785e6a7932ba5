"""A PostgreSQL cluster of a test's own (initdb into a temporary directory), to kill and start again
at the same address while services are connected to it. The shared server on 5432 is never touched."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from tests.support.processes import ServiceProcess, free_port, wait_for


def _binaries() -> Path:
    """PG_BIN, else the newest /usr/lib/postgresql/<version>/bin (Debian's layout)."""
    if os.environ.get("PG_BIN"):
        return Path(os.environ["PG_BIN"])
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    return found[-1].parent if found else Path("/usr/lib/postgresql/15/bin")


BIN = _binaries()


def _server_user() -> str | None:
    """PostgreSQL refuses to run as root: as root, the cluster belongs to the `postgres` user."""
    return "postgres" if os.geteuid() == 0 else None


class PrivatePostgres:
    """One cluster on one port. `listen` are the addresses it binds (127.0.0.1 always first); every
    address is trusted, since the cluster lives only as long as the test."""

    def __init__(self, listen: tuple[str, ...] = ("127.0.0.1",)) -> None:
        self.port = free_port()
        self.listen = listen
        self.user = _server_user()
        self.root = Path(tempfile.mkdtemp(prefix="private-pg-"))
        self.data = self.root / "data"
        self.proc: ServiceProcess | None = None
        if self.user:
            shutil.chown(self.root, self.user)
        subprocess.run(
            [str(BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
             "--no-sync", "--no-instructions"],
            check=True, capture_output=True, user=self.user,
        )  # fmt: skip
        with open(self.data / "pg_hba.conf", "a") as hba:
            hba.write("host all all 0.0.0.0/0 trust\n")

    def url(self, database: str, host: str = "127.0.0.1") -> str:
        return f"postgres://postgres@{host}:{self.port}/{database}"

    def _ready(self) -> bool:
        try:
            with psycopg.connect(self.url("postgres"), connect_timeout=1) as conn:
                return conn.execute("SELECT 1").fetchone() == (1,)
        except psycopg.OperationalError:
            return False

    def start(self) -> None:
        # fsync off: these tests kill the server process, not the machine; a committed write is in
        # the write-ahead log in the OS page cache and survives the server's death either way.
        args = [str(BIN / "postgres"), "-D", str(self.data), "-p", str(self.port), "-k", str(self.root),
                "-c", f"listen_addresses={','.join(self.listen)}", "-c", "fsync=off",
                "-c", "max_connections=300", "-c", "shared_buffers=32MB"]  # fmt: skip
        self.proc = ServiceProcess(f"postgres-{self.port}", args, {"PATH": "/usr/bin:/bin"}, user=self.user)
        wait_for(self._ready, timeout=30, interval=0.1, what="private PostgreSQL")

    def kill(self) -> None:
        """SIGKILL to the postmaster and every backend (the process group): a crash, recovered from
        the write-ahead log on the next start."""
        if self.proc is not None:
            self.proc.kill(signal.SIGKILL)
            self.proc.proc.wait(timeout=10)
            wait_for(self._backends_gone, timeout=10, what="PostgreSQL backends to exit")
            self.proc.stop()
            self.proc = None

    def _backends_gone(self) -> bool:
        # Backends are in the postmaster's process group and die with it; the next start needs the
        # port and the shared memory free.
        assert self.proc is not None
        try:
            os.killpg(self.proc.proc.pid, 0)
        except ProcessLookupError:
            return True
        return False

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()
            self.proc = None

    def create_database(self, name: str) -> str:
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


@contextmanager
def running_private_postgres(listen: tuple[str, ...] = ("127.0.0.1",)) -> Iterator[PrivatePostgres]:
    server = PrivatePostgres(listen)
    try:
        server.start()
        yield server
    finally:
        server.remove()
