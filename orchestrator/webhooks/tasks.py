"""Webhook jobs on the control queue; each is idempotent (claims by conditional UPDATE)."""

from celery import shared_task

from orchestrator.webhooks import delivery, services


@shared_task(name="orchestrator.webhooks.dispatch_events", ignore_result=True)
def dispatch_events() -> None:
    # Drain the outbox in batches; SKIP LOCKED lets concurrent dispatchers share the work.
    while services.events_dispatch():
        pass


@shared_task(name="orchestrator.webhooks.periodic", ignore_result=True)
def periodic() -> None:
    """Beat job: the outbox safety net (events whose kick was lost) and the delivery sweep."""
    dispatch_events()
    services.deliveries_sweep()


@shared_task(name="orchestrator.webhooks.deliver", ignore_result=True)
def deliver(delivery_id: str) -> None:
    delivery.delivery_attempt(delivery_id=delivery_id)
