"""The agent's recovery thread (in the worker's main process, beside the heartbeat): every
SWEEP_INTERVAL_SECONDS it tries the recovery sweep, which runs only where the database lock is free
and no sweep ran within the interval. Recovery so needs no separate beat process: any one live
agent is enough."""

from __future__ import annotations

import contextlib
import logging
import threading

from django.conf import settings
from django.db import DatabaseError, connection

from orchestrator.system.services import recovery_sweep

logger = logging.getLogger(__name__)


class Sweeper:
    def __init__(self, *, agent_id: str) -> None:
        self.agent_id = agent_id
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="orch-sweeper", daemon=True)

    def sweep_once(self) -> dict[str, int] | None:
        try:
            return recovery_sweep(sweeper=self.agent_id)
        except Exception:
            # Whatever fails (database down, a bug), the thread lives on and tries at its next turn.
            logger.exception("Recovery sweep in agent %s failed", self.agent_id)
            return None
        finally:
            # The lock is per connection; none is kept between turns, so pool children forked
            # meanwhile never inherit a live socket of this thread (and no lock outlives a turn).
            with contextlib.suppress(DatabaseError):
                connection.close()

    def _loop(self) -> None:
        while not self.stop.wait(settings.SWEEP_INTERVAL_SECONDS):
            self.sweep_once()

    def start(self) -> None:
        self.thread.start()

    def shutdown(self, **kwargs) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
