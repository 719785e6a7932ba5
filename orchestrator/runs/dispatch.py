"""Waking agents. Celery carries only (task run id, attempt); everything else is read from the
database by the agent, which claims the task run with a conditional UPDATE."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import transaction
from kombu.exceptions import OperationalError

logger = logging.getLogger(__name__)

# A wake-up is worth a short wait for the broker, not a stuck agent or request: past this, the
# sweeper sends it again (queued task runs whose wake-up is overdue).
PUBLISH_RETRY = {"max_retries": 3, "interval_start": 0.2, "interval_step": 0.5, "interval_max": 1.0}


@dataclass(frozen=True)
class Wakeup:
    task_run_id: str
    queue: str
    attempt: int  # the task run's `attempts` when sent; a stale or duplicate message no longer matches
    countdown: float = 0.0


def send_now(wakeups: list[Wakeup]) -> None:
    """Never raises for a broker outage: the task runs are already queued in the database, and
    the sweeper re-sends wake-ups that are overdue."""
    # runs.tasks -> executor -> lifecycle -> dispatch: importing the task at the top would be a loop
    from orchestrator.runs.tasks import execute_task_run

    if not wakeups:
        return
    try:
        with execute_task_run.app.producer_or_acquire() as producer:
            for w in wakeups:
                execute_task_run.apply_async(
                    args=[w.task_run_id, w.attempt],
                    queue=w.queue,
                    countdown=w.countdown or None,
                    producer=producer,
                    retry=True,
                    retry_policy=PUBLISH_RETRY,
                )
    except (OperationalError, OSError) as exc:
        logger.warning("Broker unavailable (%s): %d wake-up(s) left to the sweeper", exc, len(wakeups))


def send_on_commit(wakeups: list[Wakeup]) -> None:
    if wakeups:
        transaction.on_commit(lambda: send_now(list(wakeups)))
