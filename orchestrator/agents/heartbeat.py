"""The agent's heartbeat thread (in the worker's main process, beside the pool)."""

from __future__ import annotations

import logging
import os
import socket
import threading

from django.conf import settings
from django.db import DatabaseError, close_old_connections, connection

from orchestrator.agents.services import agent_heartbeat, agent_stopped

logger = logging.getLogger(__name__)


def parse_tags(raw: str) -> list[str]:
    """ORCH_AGENT_TAGS="gpu:yes,zone:eu" -> ["gpu:yes", "zone:eu"] (tags are `key:value` strings)."""
    return [t.strip() for t in raw.split(",") if t.strip()]


class Heartbeat:
    def __init__(self, *, agent_id: str, queues: list[str], tags: list[str]) -> None:
        self.agent_id, self.queues, self.tags = agent_id, queues, tags
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="orch-heartbeat", daemon=True)

    def beat(self) -> None:
        try:
            agent_heartbeat(
                agent_id=self.agent_id,
                queues=self.queues,
                tags=self.tags,
                hostname=socket.gethostname(),
                pid=os.getpid(),
            )
        except DatabaseError:
            logger.exception("Heartbeat for agent %s failed; retrying next interval", self.agent_id)
        finally:
            # No connection is kept open between beats: pool children forked meanwhile must not
            # inherit (and later close) a live socket of this thread.
            connection.close()

    def _loop(self) -> None:
        close_old_connections()
        while not self.stop.wait(settings.AGENT_HEARTBEAT_SECONDS):
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
            agent_stopped(agent_id=self.agent_id)
        except DatabaseError:
            logger.exception("Could not mark agent %s offline; the sweeper will", self.agent_id)
        finally:
            connection.close()
