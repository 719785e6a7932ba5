"""The agent's heartbeat thread (in the worker's main process, beside the pool)."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading

from django.conf import settings
from django.db import DatabaseError, connection

from orchestrator.agents.services import agent_heartbeat, agent_stopped
from shared import backoff

logger = logging.getLogger(__name__)

# After a failed beat the next try comes sooner than the regular interval (0.5 s, doubling, capped at
# the interval): a database blip must not leave the agent silent long enough to look dead.
RETRY_FIRST_SECONDS = 0.5


def parse_tags(raw: str) -> list[str]:
    """ORCH_AGENT_TAGS="gpu:yes,zone:eu" -> ["gpu:yes", "zone:eu"] (tags are `key:value` strings)."""
    return [t.strip() for t in raw.split(",") if t.strip()]


class Heartbeat:
    def __init__(self, *, agent_id: str, session_id: str, queues: list[str], tags: list[str]) -> None:
        self.agent_id, self.session_id, self.queues, self.tags = agent_id, session_id, queues, tags
        self.failures = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="orch-heartbeat", daemon=True)

    def beat(self) -> bool:
        try:
            agent_heartbeat(
                agent_id=self.agent_id,
                queues=self.queues,
                tags=self.tags,
                hostname=socket.gethostname(),
                pid=os.getpid(),
                session_id=self.session_id,
            )
        except Exception:
            # Whatever fails (database down, a bug), the thread must live on: a dead heartbeat
            # thread would get the busy agent's work recovered from under it.
            self.failures += 1
            logger.exception("Heartbeat for agent %s failed (%d in a row)", self.agent_id, self.failures)
            return False
        finally:
            # No connection is kept open between beats: pool children forked meanwhile must not
            # inherit (and later close) a live socket of this thread; a broken one is replaced.
            _close_quietly()
        self.failures = 0
        return True

    def next_wait(self) -> float:
        interval = settings.AGENT_HEARTBEAT_SECONDS
        if not self.failures:
            return interval
        return backoff.exponential(self.failures, base=RETRY_FIRST_SECONDS, cap=interval)

    def _loop(self) -> None:
        while not self.stop.wait(self.next_wait()):
            self.beat()

    def start(self) -> None:
        self.beat()
        self.thread.start()

    def shutdown(self, **kwargs) -> None:
        """Celery `worker_shutdown` (after the pool has finished its tasks): stop beating and
        report offline now."""
        self.stop.set()
        self.thread.join(timeout=5)
        try:
            agent_stopped(agent_id=self.agent_id, session_id=self.session_id)
        except DatabaseError:
            logger.exception("Could not mark agent %s offline; the sweeper will", self.agent_id)
        finally:
            _close_quietly()


def _close_quietly() -> None:
    with contextlib.suppress(DatabaseError):
        connection.close()
