"""A real WebSocket client against daphne running the case service."""

import asyncio
import json

import pytest
import websockets
from websockets.exceptions import WebSocketException

from casemgmt.accounts.tokens import issue_for
from casemgmt.realtime.events import broadcast
from tests.support.asyncdb import call, receive_json

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


def ws_url(base: str, token: str | None = None) -> str:
    url = base.replace("http://", "ws://") + "/ws"
    return f"{url}?token={token}" if token else url


@pytest.mark.parametrize("token", [None, "garbage"])
def test_connection_without_a_valid_token_is_rejected(asgi_server, token):
    async def attempt():
        with pytest.raises(WebSocketException):
            async with websockets.connect(ws_url(asgi_server, token), open_timeout=10) as ws:
                await ws.recv()

    asyncio.run(attempt())


def test_tenant_message_reaches_subscribers_with_query_token_and_header(
    asgi_server, tenant, other_tenant, admin_user, make_user
):
    outsider = make_user(other_tenant, roles=["admin"])
    token = issue_for(admin_user).token
    outsider_token = issue_for(outsider).token

    async def scenario():
        async with (
            websockets.connect(ws_url(asgi_server, token), open_timeout=10) as by_query,
            websockets.connect(
                ws_url(asgi_server), additional_headers={"Authorization": f"Bearer {token}"}, open_timeout=10
            ) as by_header,
            websockets.connect(ws_url(asgi_server, outsider_token), open_timeout=10) as outsider_ws,
        ):
            for ws in (by_query, by_header, outsider_ws):  # subscription is in place once the server answers
                await ws.send(json.dumps({"type": "ping"}))
                assert (await receive_json(ws))["type"] == "pong"
            await call(
                broadcast, tenant_id=tenant.id, type="case:updated", data={"caseId": "c1", "version": 2}
            )
            for ws in (by_query, by_header):
                message = await receive_json(ws)
                assert message["type"] == "case:updated" and message["data"] == {"caseId": "c1", "version": 2}
                assert message["timestamp"].endswith("Z")
            with pytest.raises(asyncio.TimeoutError):
                await receive_json(outsider_ws, timeout=1)

    asyncio.run(scenario())


def test_messages_needing_a_permission_skip_readers_without_it(asgi_server, tenant, make_user, admin_user):
    no_perm = make_user(tenant, permissions=["tasks:read"])

    async def scenario():
        async with (
            websockets.connect(ws_url(asgi_server, issue_for(admin_user).token), open_timeout=10) as admin_ws,
            websockets.connect(ws_url(asgi_server, issue_for(no_perm).token), open_timeout=10) as limited_ws,
        ):
            for ws in (admin_ws, limited_ws):
                await ws.send(json.dumps({"type": "ping"}))
                await receive_json(ws)
            await call(
                broadcast,
                tenant_id=tenant.id,
                type="case:updated",
                data={"caseId": "c2"},
                permission="cases:read",
            )
            assert (await receive_json(admin_ws))["data"]["caseId"] == "c2"
            with pytest.raises(asyncio.TimeoutError):
                await receive_json(limited_ws, timeout=1)

    asyncio.run(scenario())
