"""Webhook jobs on the control queue. Each is idempotent (claims by conditional UPDATE); they are
sent by name through `queue.py`."""

from __future__ import annotations

from celery import shared_task

from orchestrator.webhooks import delivery, queue, services


@shared_task(name=queue.SWEEP_TASK, ignore_result=True)
def webhooks_sweep() -> None:
    """Beat job: the outbox safety net (events not dispatched yet) and the delivery sweep."""
    # Drain the outbox in batches; SKIP LOCKED lets concurrent dispatchers share the work.
    while services.events_dispatch():
        pass
    services.deliveries_sweep()


@shared_task(name=queue.DELIVER_TASK, ignore_result=True)
def deliver(delivery_id: str) -> None:
    delivery.delivery_attempt(delivery_id=delivery_id)
