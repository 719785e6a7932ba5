"""Outbound webhooks after case events: a tenant that configures the `webhook` connector with
`webhookUrl` and `events` gets one signed delivery per subscribed event, through the outbox.

Called by the case services inside the transaction of the change, so the delivery exists exactly
when the change does, carrying the case as that change left it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings

from casemgmt.connectors.crypto import UndecryptableConfig
from casemgmt.connectors.delivery import delivery_create
from casemgmt.connectors.selectors import connector_config_values
from casemgmt.workflows.engine import template_context

if TYPE_CHECKING:
    from casemgmt.cases.models import Case

CASE_EVENTS = ("case:created", "case:updated", "case:closed", "case:cancelled")


def case_event_webhooks(*, case: Case, event: str) -> None:
    try:
        config = connector_config_values(tenant_id=case.tenant_id, key="webhook") or {}
    except UndecryptableConfig:
        return  # a configuration no key opens cannot name a receiver; the case change still stands
    if event not in (config.get("events") or []) or not config.get("webhookUrl"):
        return
    context = {**template_context(case), "case_id": str(case.id)}
    delivery_create(
        case=case, connector_key="webhook", action="send", raw_inputs={"event": event},
        retries=settings.CONNECTOR_RETRIES, template_context=context,
    )  # fmt: skip
