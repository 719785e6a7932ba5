"""Outbound webhooks after case events: a tenant that configures the `webhook` connector with
`webhookUrl` and `events` gets one signed delivery per subscribed event, through the outbox.

Registered with the cases app (below connectors) at start-up; the case services call it inside the
transaction of the change, so the delivery exists exactly when the change does, carrying the case as
that change left it. A case create reads the stored configuration in the statement that takes the
case number (`WEBHOOK_CONFIG_READ`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from uuid import UUID

from django.conf import settings

from casemgmt.cases.hooks import CreateRead
from casemgmt.connectors.delivery import delivery_create
from casemgmt.connectors.models import ConnectorConfig
from casemgmt.connectors.selectors import connector_config_get_or_none
from casemgmt.workflows.engine import template_context
from shared.crypto import UndecryptableSecret, decrypt_json

if TYPE_CHECKING:
    from casemgmt.cases.models import Case, CaseType

CASE_EVENTS = ("case:created", "case:updated", "case:closed", "case:cancelled")


WEBHOOK = "webhook"  # the connector key whose configuration subscribes to case events


def _stored_config(tenant_id: UUID, case_type: CaseType, workflow_version_id: Any) -> str | None:
    row = connector_config_get_or_none(tenant_id=tenant_id, key=WEBHOOK)
    return row.config_encrypted if row else None


WEBHOOK_CONFIG_READ = CreateRead(
    name="webhook_config",
    sql=f"""(SELECT c.config_encrypted FROM {ConnectorConfig._meta.db_table} c
    WHERE c.tenant_id = %(tenant)s AND c.key = '{WEBHOOK}')""",  # noqa: S608 - the model table name; values are placeholders
    read=_stored_config,
)


def case_event_listener(*, case: Case, event: str, reads: Mapping[str, Any] | None) -> None:
    """A case event's webhooks; a create has read the stored configuration already."""
    if reads is not None and WEBHOOK_CONFIG_READ.name in reads:
        case_event_webhooks_configured(case=case, event=event, stored=reads[WEBHOOK_CONFIG_READ.name])
    else:
        case_event_webhooks(case=case, event=event)


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
