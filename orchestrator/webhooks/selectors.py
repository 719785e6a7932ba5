from __future__ import annotations

from django.db.models import QuerySet

from orchestrator.webhooks.models import Delivery, Webhook
from shared.api import errors


def webhook_get(*, webhook_id: str) -> Webhook:
    webhook = Webhook.objects.filter(pk=webhook_id).first()
    if webhook is None:
        raise errors.NotFound(f"Webhook {webhook_id} not found.")
    return webhook


def webhook_list() -> QuerySet[Webhook]:
    return Webhook.objects.order_by("created_at", "id")


def delivery_list(*, webhook: Webhook) -> QuerySet[Delivery]:
    return (
        Delivery.objects.filter(webhook=webhook)
        .select_related("event")
        .prefetch_related("attempt_rows")
        .order_by("-created_at", "-event_id")
    )


def subscribed_event_types() -> set[str]:
    """The event types at least one registration subscribes to."""
    return {t for types in Webhook.objects.values_list("events", flat=True) for t in types}


def subscribed_sql(event_type_sql: str) -> str:
    """PostgreSQL: true when a registration subscribes to the event type the expression names (for
    the agents' single statements, which cannot call `subscribed_event_types`)."""
    table = Webhook._meta.db_table
    return f"EXISTS (SELECT 1 FROM {table} w WHERE w.events @> jsonb_build_array(({event_type_sql})::text))"  # noqa: S608 - the model table and an expression from code
