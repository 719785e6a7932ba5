"""A redis-server of a test's own, to stop and start again at the same address."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

import redis

from tests.support.processes import ServiceProcess, free_port, wait_for


class PrivateRedis:
    """A redis-server of the test's own on a fixed port, so it can be stopped and started again at
    the same address while services are connected to it."""

    def __init__(self, bind: tuple[str, ...] = ("127.0.0.1",)) -> None:
        self.port = free_port()
        self.bind = bind
        self.url = f"redis://127.0.0.1:{self.port}"
        self.proc: ServiceProcess | None = None

    def _ping(self) -> bool:
        try:
            return bool(redis.Redis(port=self.port, socket_connect_timeout=0.2).ping())
        except redis.ConnectionError:
            return False

    def start(self) -> None:
        args = ["redis-server", "--port", str(self.port), "--bind", *self.bind, "--protected-mode", "no", "--save", "",
                "--appendonly", "no", "--daemonize", "no"]  # fmt: skip
        self.proc = ServiceProcess(f"redis-{self.port}", args, {"PATH": "/usr/local/bin:/usr/bin:/bin"})
        wait_for(self._ping, timeout=10, what="private redis-server")

    def kill(self) -> None:
        """kill -9 of the server: without persistence, every key (queues included) is gone."""
        if self.proc is not None:
            self.proc.kill(signal.SIGKILL)
            self.proc.proc.wait(timeout=10)
            self.proc.stop()
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()
            self.proc = None
        wait_for(lambda: not self._ping(), timeout=10, what="redis-server to stop")


@contextmanager
def running_private_redis() -> Iterator[PrivateRedis]:
    """A started PrivateRedis, stopped on exit (also when the test already stopped it)."""
    server = PrivateRedis()
    server.start()
    try:
        yield server
    finally:
        server.stop()
