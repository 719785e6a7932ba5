"""Reads of inbound webhooks, always scoped to one tenant."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from casemgmt.webhooks.models import InboundWebhook
from shared.api.errors import NotFound


def inbound_webhook_list(*, tenant_id: Any) -> QuerySet[InboundWebhook]:
    return InboundWebhook.objects.filter(tenant_id=tenant_id).order_by("-created_at", "-id")


def inbound_webhook_get(*, tenant_id: Any, webhook_id: Any) -> InboundWebhook:
    """404 for an unknown id and for another tenant's webhook alike."""
    webhook = InboundWebhook.objects.filter(tenant_id=tenant_id, id=webhook_id).first()
    if webhook is None:
        raise NotFound("Inbound webhook not found.")
    return webhook


def inbound_webhook_receiver(*, tenant_id: Any, path: str) -> InboundWebhook:
    """The active webhook at a public path; 404 when there is none (or it is switched off)."""
    webhook = (
        InboundWebhook.objects.select_related("principal")
        .filter(tenant_id=tenant_id, path=path, is_active=True)
        .first()
    )
    if webhook is None:
        raise NotFound("No inbound webhook at this path.")
    return webhook
