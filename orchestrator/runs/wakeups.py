"""Waking agents. Celery carries only (task run id, attempt); everything else is read from the
database by the agent, which claims the task run with a conditional UPDATE.

Messages are sent by task name: the task itself (runs.tasks, the top of this package) is only the
Celery adapter that receives them, so nothing below it imports it to send. Its options live here,
beside the name, and the task is declared with them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from celery import current_app
from celery.utils.nodenames import anon_nodename
from django.db import transaction
from kombu.exceptions import BatchPublishError, OperationalError
from kombu.utils.uuid import uuid

if TYPE_CHECKING:
    from celery import Celery
    from kombu import Producer

logger = logging.getLogger(__name__)

# A wake-up is worth a short wait for the broker, not a stuck agent or request: past this, the
# sweeper sends it again (queued task runs whose wake-up is overdue).
PUBLISH_RETRY = {"max_retries": 3, "interval_start": 0.2, "interval_step": 0.5, "interval_max": 1.0}
PUBLISH_BATCH = 500  # broker commands per pipeline

EXECUTE_TASK_RUN = "orchestrator.runs.execute_task_run"
# A long command must not be cut by Celery's global time limit: the task run's own
# `timeout_seconds` governs it (and the sweeper covers a worker that dies).
DAY = 24 * 3600
EXECUTE_OPTIONS = {"time_limit": DAY, "soft_time_limit": DAY - 60, "ignore_result": True}


@dataclass(frozen=True)
class Wakeup:
    task_run_id: str
    queue: str
    attempt: int  # the task run's `attempts` when sent; a stale or duplicate message no longer matches
    countdown: float = 0.0


def send_now(wakeups: list[Wakeup]) -> None:
    """Never raises for a broker outage: the task runs are already queued in the database, and
    the sweeper re-sends wake-ups that are overdue."""
    if not wakeups:
        return
    app = current_app._get_current_object()  # the app the task is registered with, as the task's own
    try:
        # Many wake-ups (a large DAG's roots) leave in one round trip to the broker (a pipeline;
        # kombu sends them one by one where its transport cannot batch): one by one they cost the
        # scheduling request as much CPU as everything else it does.
        with app.producer_or_acquire() as producer, producer.batch(max_size=PUBLISH_BATCH):
            _publish(app, producer, wakeups)
    except (OperationalError, OSError, BatchPublishError) as exc:
        # A failed batch may have been delivered in part: duplicates are harmless (the claim is
        # conditional), and what is missing the sweeper sends again.
        logger.warning("Broker unavailable (%s): %d wake-up(s) left to the sweeper", exc, len(wakeups))


def _publish(app: Celery, producer: Producer, wakeups: list[Wakeup]) -> None:
    """The same messages `task.apply_async` sends, for less: Celery's message builder and publisher
    are called directly, once the per-call work of `apply_async` is done once for all (routing and
    configuration lookups, the caller's identity, the queue's declaration). That work cost three
    quarters of a wake-up's CPU, and a large DAG sends thousands. A delayed wake-up (a retry's)
    takes Celery's own path by name (`send_task`), which computes its ETA. A test compares both
    paths' messages with `apply_async`'s."""
    parent = app.current_worker_task  # a wake-up sent from a task records it, as apply_async does
    root_id = (parent.request.root_id or parent.request.id) if parent else None
    parent_id = parent.request.id if parent else None
    common = {
        **EXECUTE_OPTIONS,
        "reply_to": app.thread_oid,
        "root_id": root_id,
        "parent_id": parent_id,
        "kwargsrepr": "{}",
        "origin": anon_nodename(),
    }
    declared: set[str] = set()
    for w in wakeups:
        args = [w.task_run_id, w.attempt]
        with producer.connection._reraise_as_library_errors():  # as apply_async: kombu's errors
            if w.countdown:
                app.send_task(EXECUTE_TASK_RUN, args=args, queue=w.queue, countdown=w.countdown,
                              producer=producer, retry=True, retry_policy=PUBLISH_RETRY,
                              **EXECUTE_OPTIONS)  # fmt: skip
                continue
            task_id = uuid()
            message = app.amqp.create_task_message(
                task_id, EXECUTE_TASK_RUN, args, {}, argsrepr=repr(args), **common
            )
            app.amqp.send_task_message(
                producer, EXECUTE_TASK_RUN, message, queue=w.queue, declare=[] if w.queue in declared else None,
                retry=True, retry_policy=PUBLISH_RETRY,
            )  # fmt: skip
        declared.add(w.queue)


def send_on_commit(wakeups: list[Wakeup]) -> None:
    if wakeups:
        transaction.on_commit(lambda: send_now(list(wakeups)))


def waiting_messages(queue: str) -> int | None:
    """Messages waiting in the broker for `queue` (not those a worker has taken), or None when the
    broker cannot tell (queue never used, broker down)."""
    try:
        with current_app.connection_for_read() as conn:
            # Not passive: a passive declare fails on a queue no consumer declared in this broker
            # session, and declaring one is harmless (agents declare theirs on start).
            return int(conn.default_channel.queue_declare(queue=queue).message_count)
    except Exception:  # noqa: BLE001 - any failure only means "unknown": the sweeper re-sends then
        return None
