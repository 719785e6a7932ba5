"""Outbound webhooks after case events: a tenant that configures the `webhook` connector with
`webhookUrl` and `events` gets one signed delivery per subscribed event, through the outbox.

Called by the case services inside the transaction of the change, so the delivery exists exactly
when the change does, carrying the case as that change left it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings

from casemgmt.connectors.delivery import delivery_create
from casemgmt.connectors.selectors import connector_config_get_or_none
from casemgmt.workflows.engine import template_context
from shared.crypto import UndecryptableSecret, decrypt_json

if TYPE_CHECKING:
    from casemgmt.cases.models import Case

CASE_EVENTS = ("case:created", "case:updated", "case:closed", "case:cancelled")


WEBHOOK = "webhook"  # the connector key whose configuration subscribes to case events


def case_event_webhooks(*, case: Case, event: str) -> None:
    row = connector_config_get_or_none(tenant_id=case.tenant_id, key=WEBHOOK)
    case_event_webhooks_configured(case=case, event=event, stored=row.config_encrypted if row else None)


def case_event_webhooks_configured(*, case: Case, event: str, stored: str | None) -> None:
    """`case_event_webhooks` for a caller that has read the stored (encrypted) configuration itself,
    None when there is none: case creation reads it in the statement that takes the case number."""
    if stored is None:
        return
    try:
        config = decrypt_json(stored) or {}
    except UndecryptableSecret:
        return  # a configuration no key opens cannot name a receiver; the case change still stands
    if event not in (config.get("events") or []) or not config.get("webhookUrl"):
        return
    context = {**template_context(case), "case_id": str(case.id)}
    delivery_create(
        case=case, connector_key="webhook", action="send", raw_inputs={"event": event},
        retries=settings.CONNECTOR_RETRIES, template_context=context,
    )  # fmt: skip
