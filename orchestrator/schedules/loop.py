"""The scheduler loop: ticks every SCHEDULER_TICK_SECONDS in a thread of its own. Every agent on
the control queue runs one, and so does `run_scheduler`; the database keeps concurrent ticks from
firing anything twice, so no single scheduler process has to stay alive."""

from __future__ import annotations

import logging
import os
import socket
import threading

from django.conf import settings
from django.db import connection

from orchestrator.schedules.firing import schedules_tick

logger = logging.getLogger(__name__)


def default_ticker_name() -> str:
    return f"scheduler@{socket.gethostname()}:{os.getpid()}"


class SchedulerLoop:
    def __init__(self, *, name: str, period: float | None = None) -> None:
        self.name = name
        self.period = period if period is not None else settings.SCHEDULER_TICK_SECONDS
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, name="orch-scheduler", daemon=True)

    def tick(self) -> int:
        try:
            return schedules_tick(ticker=self.name)
        except Exception:
            # Database away or a bug: the loop lives on and tries again next period.
            logger.exception("Scheduler tick of %s failed", self.name)
            return 0
        finally:
            # No connection is kept between ticks: in an agent, pool children forked meanwhile must
            # not inherit this thread's socket; a broken connection is replaced on the next tick.
            connection.close()

    def run(self) -> None:
        while True:
            self.tick()
            if self.stop.wait(self.period):
                return

    def start(self) -> None:
        self.thread.start()

    def shutdown(self, **kwargs) -> None:
        self.stop.set()
        self.thread.join(timeout=10)
