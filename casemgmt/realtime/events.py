"""Sending WebSocket messages to a tenant's subscribers. Call `broadcast_on_commit` from services."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Coroutine
from typing import Any
from uuid import UUID

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from channels_redis.core import RedisChannelLayer
from django.db import transaction

from shared.api.time import iso, now_ms
from shared.channel_layer import retrying

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
    failure to reach the channel layer is logged, never raised into the request. A connection error
    is tried again a few times with backoff (well under a second in all): after a Redis restart
    every kept connection is dead, and the first send on one fails before redis-py replaces it.
    A send retried after Redis took it but before its answer came back is delivered twice; clients
    treat messages as hints to reload, so a repeat is harmless where a loss is not."""
    message = {"type": type, "timestamp": iso(now_ms()), "data": data}
    layer = get_channel_layer()
    if layer is None:
        return
    event = {"type": "tenant.event", "message": message, "permission": permission, "only_user": only_user}
    try:
        if isinstance(layer, RedisChannelLayer):
            group = tenant_group(tenant_id)
            _SENDS.run(
                retrying(lambda: layer.group_send(group, event), what=f"WebSocket broadcast of {type}")
            )
        else:  # the in-memory layer's queues belong to the server's loop, which async_to_sync finds
            async_to_sync(layer.group_send)(tenant_group(tenant_id), event)
    except Exception:
        logger.exception("WebSocket broadcast of %s failed", type)


class _SendLoop:
    """One event loop thread per process for sends to the Redis channel layer from synchronous code.

    `async_to_sync` called from a plain thread (a request on the WSGI thread pool, a Celery task)
    builds a new event loop for every call, and channels_redis opens its Redis connections per
    loop: each broadcast paid a loop and a connection, about 2 ms of CPU. On a loop kept for the
    process the layer's connections are reused (about 0.2 ms). The caller still waits for the send,
    so the messages of one request leave in order; a forked child starts its own loop."""

    TIMEOUT = 10.0  # seconds; a send that takes longer is abandoned and logged

    def __init__(self) -> None:
        self._reset()
        # A forked child (a Celery worker) has neither the parent's loop thread nor, safely, its lock.
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                threading.Thread(
                    target=self._loop.run_forever, name="channel-layer-sends", daemon=True
                ).start()
            return self._loop

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        future = asyncio.run_coroutine_threadsafe(coroutine, self._running_loop())
        try:
            future.result(self.TIMEOUT)
        except TimeoutError:
            future.cancel()
            raise


_SENDS = _SendLoop()


def broadcast_on_commit(**kwargs: Any) -> None:
    transaction.on_commit(lambda: broadcast(**kwargs))
