"""A Redis restart between two broadcasts: the first broadcast after it still arrives.

The sender (this process, as a web request or a Celery task would) keeps its channel layer
connections for the process's life; a restart leaves them dead, and redis-py replaces a dead one only
after a command failed on it. That first command was the broadcast, which was then lost."""

import asyncio
import json

import pytest
import websockets
from django.test import override_settings
from websockets.exceptions import ConnectionClosed

from casemgmt.accounts.tokens import issue_for
from casemgmt.realtime.events import broadcast
from shared import conf
from tests.support.asyncdb import call, receive_json
from tests.support.processes import start_ready_asgi_server
from tests.support.redis_server import running_private_redis

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


@pytest.fixture
def redis_server():
    with running_private_redis() as server:
        yield server


@pytest.fixture
def service(subprocess_env, redis_server):
    server, base = start_ready_asgi_server(
        name="case-asgi-redis-restart",
        application="casemgmt.config.asgi:application",
        env={**subprocess_env, "CASE_REDIS_URL": redis_server.url},
        health_path="/healthz",
    )
    try:
        yield base
    finally:
        server.stop()


async def subscribed(url: str):
    """A socket whose subscription is in place (the server answered its ping). Right after the
    restart the server's own layer may still be reconnecting: a refused handshake is tried again,
    a bounded number of times."""
    for attempt in range(50):
        try:
            ws = await websockets.connect(url, open_timeout=10)
            await ws.send(json.dumps({"type": "ping"}))
            assert (await receive_json(ws))["type"] == "pong"
            return ws
        except (ConnectionClosed, OSError, websockets.InvalidStatus):
            await asyncio.sleep(0.1 * min(attempt + 1, 5))
    raise AssertionError("no WebSocket subscription after the Redis restart")


def test_the_first_broadcast_after_a_redis_restart_arrives(service, redis_server, tenant, admin_user):
    url = service.replace("http://", "ws://") + f"/ws?token={issue_for(admin_user).token}"
    layers = {"default": conf.redis_channel_layer(f"{redis_server.url}/2", "case:asgi")}

    async def scenario():
        ws = await subscribed(url)
        await call(broadcast, tenant_id=tenant.id, type="case:updated", data={"caseId": "before"})
        assert (await receive_json(ws))["data"] == {"caseId": "before"}  # the sender's pool is warm
        await ws.close()

        await asyncio.to_thread(redis_server.stop)
        await asyncio.to_thread(redis_server.start)

        ws = await subscribed(url)
        await call(broadcast, tenant_id=tenant.id, type="case:updated", data={"caseId": "after"})
        assert (await receive_json(ws))["data"] == {"caseId": "after"}
        await ws.close()

    with override_settings(CHANNEL_LAYERS=layers):
        asyncio.run(scenario())
