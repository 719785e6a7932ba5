"""Many sockets opened and closed at once: the tenant's channel group must shrink back to the sockets
still open, and the next broadcast must reach them.

Before the fix, redis-py 8's asyncio pool (at most 100 connections per event loop) raised
MaxConnectionsError in most of the 300 concurrent `group_discard` calls, and the closed sockets'
channels stayed in the group: every later broadcast was still written to each of them."""

import asyncio
import json

import pytest
import redis
import websockets
from channels.layers import get_channel_layer
from django.conf import settings

from casemgmt.accounts.tokens import issue_for
from casemgmt.realtime.events import broadcast, tenant_group
from tests.support.asyncdb import call, receive_json
from tests.support.processes import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

CHURN = 300


def group_size(tenant_id) -> int:
    layer = get_channel_layer()
    client = redis.Redis.from_url(settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"][0]["address"])
    try:
        return client.zcard(layer._group_key(tenant_group(tenant_id)))
    finally:
        client.close()


async def _open(url: str, gate: asyncio.Semaphore):
    """A subscribed socket. The opening is not what is tested: bounded concurrency, and a handshake
    the server dropped (daphne gives the application 5 s to accept, which a loaded machine can
    miss) is tried again, a bounded number of times."""
    async with gate:
        for attempt in range(5):
            try:
                ws = await websockets.connect(url, open_timeout=30)
                break
            except (websockets.InvalidMessage, websockets.InvalidStatus, OSError, TimeoutError):
                if attempt == 4:
                    raise
        await ws.send(json.dumps({"type": "ping"}))
        assert (await receive_json(ws, timeout=30))["type"] == "pong"  # subscribed once answered
        return ws


def test_closing_many_sockets_at_once_leaves_only_the_live_one_in_the_group(asgi_server, tenant, admin_user):
    url = asgi_server.replace("http://", "ws://") + f"/ws?token={issue_for(admin_user).token}"

    async def scenario():
        async with websockets.connect(url, open_timeout=10) as live:
            await live.send(json.dumps({"type": "ping"}))
            await receive_json(live)
            gate = asyncio.Semaphore(20)
            churned = await asyncio.gather(*(_open(url, gate) for _ in range(CHURN)))
            assert await call(group_size, tenant.id) == CHURN + 1
            await asyncio.gather(*(ws.close() for ws in churned))  # all at once: the churn
            await asyncio.to_thread(
                wait_for,
                lambda: group_size(tenant.id) == 1,
                timeout=30,
                what="the closed sockets to leave the group",
            )
            await call(broadcast, tenant_id=tenant.id, type="case:updated", data={"caseId": "after-churn"})
            message = await receive_json(live)
            assert (message["type"], message["data"]) == ("case:updated", {"caseId": "after-churn"})

    asyncio.run(scenario())
