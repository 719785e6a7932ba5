"""Reads of connector state."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.db.models import QuerySet

from casemgmt.connectors.models import ConnectorConfig, Delivery, Invocation
from shared import crypto
from shared.api.errors import NotFound

# The error text a step or notification shows when a key was dropped before its values were rotated.
UNDECRYPTABLE_CONFIG = "stored connector configuration does not decrypt with any key"


def connector_config_get_or_none(*, tenant_id: UUID | str, key: str) -> ConnectorConfig | None:
    return ConnectorConfig.objects.filter(tenant_id=tenant_id, key=key).first()


def connector_config_values(*, tenant_id: UUID | str, key: str) -> dict[str, Any] | None:
    """The tenant's decrypted configuration of a connector, or None when none is stored."""
    row = connector_config_get_or_none(tenant_id=tenant_id, key=key)
    return None if row is None else crypto.decrypt_json(row.config_encrypted, what=UNDECRYPTABLE_CONFIG)


def invocation_list(
    *, tenant_id: UUID | str, connector: str | None = None, case_id: UUID | None = None
) -> QuerySet[Invocation]:
    rows = Invocation.objects.filter(tenant_id=tenant_id)
    if connector:
        rows = rows.filter(connector=connector)
    if case_id:
        rows = rows.filter(case_id=case_id)
    return rows.order_by("-created_at", "-id")


def delivery_list(
    *, tenant_id: UUID | str, status: str | None = None, connector: str | None = None
) -> QuerySet[Delivery]:
    rows = Delivery.objects.filter(tenant_id=tenant_id)
    if status:
        rows = rows.filter(status=status)
    if connector:
        rows = rows.filter(connector=connector)
    return rows.order_by("-created_at", "-id")


def delivery_get(*, tenant_id: UUID | str, delivery_id: str) -> Delivery:
    try:
        return Delivery.objects.get(tenant_id=tenant_id, pk=UUID(str(delivery_id)))
    except (ValueError, Delivery.DoesNotExist):
        raise NotFound("delivery not found") from None
