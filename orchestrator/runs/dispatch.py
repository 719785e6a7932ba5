"""Waking agents. Celery carries only (task run id, attempt); everything else is read from the
database by the agent, which claims the task run with a conditional UPDATE."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import transaction
from kombu.exceptions import BatchPublishError, OperationalError

logger = logging.getLogger(__name__)

# A wake-up is worth a short wait for the broker, not a stuck agent or request: past this, the
# sweeper sends it again (queued task runs whose wake-up is overdue).
PUBLISH_RETRY = {"max_retries": 3, "interval_start": 0.2, "interval_step": 0.5, "interval_max": 1.0}
PUBLISH_BATCH = 500  # broker commands per pipeline


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
        # Many wake-ups (a large DAG's roots) leave in one round trip to the broker (a pipeline;
        # kombu sends them one by one where its transport cannot batch): one by one they cost the
        # scheduling request as much CPU as everything else it does.
        with execute_task_run.app.producer_or_acquire() as producer, producer.batch(max_size=PUBLISH_BATCH):
            for w in wakeups:
                execute_task_run.apply_async(
                    args=[w.task_run_id, w.attempt],
                    queue=w.queue,
                    countdown=w.countdown or None,
                    producer=producer,
                    retry=True,
                    retry_policy=PUBLISH_RETRY,
                )
    except (OperationalError, OSError, BatchPublishError) as exc:
        # A failed batch may have been delivered in part: duplicates are harmless (the claim is
        # conditional), and what is missing the sweeper sends again.
        logger.warning("Broker unavailable (%s): %d wake-up(s) left to the sweeper", exc, len(wakeups))


def send_on_commit(wakeups: list[Wakeup]) -> None:
    if wakeups:
        transaction.on_commit(lambda: send_now(list(wakeups)))


def waiting_messages(queue: str) -> int | None:
    """Messages waiting in the broker for `queue` (not those a worker has taken), or None when the
    broker cannot tell (queue never used, broker down)."""
    # runs.tasks -> executor -> lifecycle -> dispatch: importing the task at the top would be a loop
    from orchestrator.runs.tasks import execute_task_run

    try:
        with execute_task_run.app.connection_for_read() as conn:
            # Not passive: a passive declare fails on a queue no consumer declared in this broker
            # session, and declaring one is harmless (agents declare theirs on start).
            return int(conn.default_channel.queue_declare(queue=queue).message_count)
    except Exception:  # noqa: BLE001 - any failure only means "unknown": the sweeper re-sends then
        return None
