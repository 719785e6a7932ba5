"""Webhook jobs on the control queue, and the only place that sends them: the services queue their
follow-up jobs through `queue_deliveries` and `queue_dispatch`. Each job is idempotent (claims by
conditional UPDATE)."""

from __future__ import annotations

import logging

from celery import shared_task

logger = logging.getLogger(__name__)


@shared_task(name="orchestrator.webhooks.dispatch_events", ignore_result=True)
def dispatch_events() -> None:
    # services -> tasks (it queues deliveries through this module): imported here, not at the top
    from orchestrator.webhooks import services

    # Drain the outbox in batches; SKIP LOCKED lets concurrent dispatchers share the work.
    while services.events_dispatch():
        pass


@shared_task(name="orchestrator.webhooks.periodic", ignore_result=True)
def periodic() -> None:
    """Beat job: the outbox safety net (events whose kick was lost) and the delivery sweep."""
    # services -> tasks (it queues deliveries through this module): imported here, not at the top
    from orchestrator.webhooks import services

    dispatch_events()
    services.deliveries_sweep()


@shared_task(name="orchestrator.webhooks.deliver", ignore_result=True)
def deliver(delivery_id: str) -> None:
    # delivery -> tasks (it queues retries through this module): imported here, not at the top
    from orchestrator.webhooks import delivery

    delivery.delivery_attempt(delivery_id=delivery_id)


def queue_deliveries(ids: list[str], countdown: float = 0) -> None:
    for delivery_id in ids:
        try:
            deliver.apply_async(args=[delivery_id], countdown=countdown or None)
        except Exception:  # noqa: BLE001 - broker down: the sweep re-sends due deliveries later
            logger.warning("could not queue webhook delivery %s; the sweep will retry", delivery_id)


def queue_dispatch() -> None:
    try:
        dispatch_events.delay()
    except Exception:  # noqa: BLE001 - broker down: the periodic dispatcher is the safety net
        logger.warning("could not queue webhook dispatch; the periodic dispatcher will pick it up")
