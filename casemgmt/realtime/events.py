"""Sending WebSocket messages to a tenant's subscribers. Call `broadcast_on_commit` from services."""

from __future__ import annotations

import logging
from typing import Any
from uuid import UUID

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from shared.api.time import iso, now_ms

logger = logging.getLogger(__name__)


def tenant_group(tenant_id: UUID | str) -> str:
    return f"tenant.{tenant_id}"


def broadcast(
    *,
    tenant_id: UUID | str,
    type: str,
    data: dict[str, Any],
    permission: str | None = None,
    only_user: str | None = None,
) -> None:
    """Message shape: {"type", "timestamp", "data"}. Delivery is best effort: a
    failure to reach the channel layer is logged, never raised into the request."""
    message = {"type": type, "timestamp": iso(now_ms()), "data": data}
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(
            tenant_group(tenant_id),
            {"type": "tenant.event", "message": message, "permission": permission, "only_user": only_user},
        )
    except Exception:
        logger.exception("WebSocket broadcast of %s failed", type)


def broadcast_on_commit(**kwargs: Any) -> None:
    transaction.on_commit(lambda: broadcast(**kwargs))
