"""A real WebSocket client against daphne running the case service."""

import asyncio
import contextlib
import itertools
import json

import pytest
import websockets
from websockets.exceptions import ConnectionClosed, WebSocketException

from casemgmt.accounts.models import User
from casemgmt.accounts.services import auth_logout, password_change, principal_disable, role_set_permissions
from casemgmt.accounts.tokens import issue_for, jwt_config
from casemgmt.realtime.events import broadcast
from shared.auth import tokens
from shared.conf import CHANNEL_LAYER_BLOCK_SECONDS
from tests.casemgmt.conftest import PASSWORD
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


def test_an_idle_socket_stays_open_and_still_receives(asgi_server, tenant, admin_user):
    """Idle for longer than two of the channel layer's blocking pops: with redis-py's default read
    timeout (as long as one pop) the server's consumer died with "Timeout reading", the socket
    closed, and messages sent before the browser reconnected were lost."""
    idle = CHANNEL_LAYER_BLOCK_SECONDS * 2 + 1
    token = issue_for(admin_user).token

    async def scenario():
        async with websockets.connect(ws_url(asgi_server, token), open_timeout=10) as ws:
            await ws.send(json.dumps({"type": "ping"}))
            assert (await receive_json(ws))["type"] == "pong"
            with pytest.raises(asyncio.TimeoutError):  # nothing arrives, and the socket is not closed
                await receive_json(ws, timeout=idle)
            await call(
                broadcast, tenant_id=tenant.id, type="case:updated", data={"caseId": "c9", "version": 3}
            )
            message = await receive_json(ws)
            assert (message["type"], message["data"]) == ("case:updated", {"caseId": "c9", "version": 3})

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


# --- principals re-checked while the socket is open -------------------------------------------------

RECHECK_WINDOW = 2.0  # casemgmt.realtime.consumers.RECHECK_SECONDS; messages may arrive within it


async def _subscribed(ws) -> None:
    await ws.send(json.dumps({"type": "ping"}))
    assert (await receive_json(ws))["type"] == "pong"


async def _pace(ws) -> None:
    """Gives the server a moment between broadcasts by waiting for the close we expect anyway."""
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(ws.wait_closed(), timeout=0.2)


def _logout(user, token):
    auth_logout(claims=tokens.verify(jwt_config(), token))


def _disable(user, token):
    principal_disable(user=user, actor=User.objects.get(tenant=user.tenant, roles__name="admin"))


def _change_password(user, token):
    password_change(user=user, current_password=PASSWORD, new_password="another-long-passphrase-77")


@pytest.mark.parametrize(
    "invalidate", [_disable, _logout, _change_password], ids=["disabled", "logout", "password"]
)
def test_open_socket_is_closed_once_its_principal_no_longer_authenticates(
    asgi_server, tenant, make_user, invalidate
):
    user = make_user(tenant, permissions=["cases:read"])
    token = issue_for(user).token

    async def scenario():
        async with websockets.connect(ws_url(asgi_server, token), open_timeout=10) as ws:
            await _subscribed(ws)
            await call(broadcast, tenant_id=tenant.id, type="case:updated", data={"n": 0})
            assert (await receive_json(ws))["data"] == {"n": 0}
            await call(invalidate, user, token)
            invalidated_at = asyncio.get_running_loop().time()
            for n in itertools.count(1):
                await call(broadcast, tenant_id=tenant.id, type="case:updated", data={"n": n})
                try:
                    await receive_json(ws)
                except ConnectionClosed as closed:
                    assert closed.rcvd is not None and closed.rcvd.code == 4401  # noqa: PT017 - the close comes after any number of messages
                    return
                # Still delivered: only allowed within the re-check window after the change.
                assert asyncio.get_running_loop().time() - invalidated_at < RECHECK_WINDOW + 1
                await _pace(ws)

    asyncio.run(scenario())


def test_removing_a_roles_permission_filters_messages_on_an_open_socket(
    asgi_server, tenant, make_user, admin_user
):
    user = make_user(tenant, permissions=["cases:read", "tasks:read"])
    role = user.roles.get()

    async def gated_message_arrives(ws, n: int) -> bool:
        """Sends a cases:read message then an ungated marker; True if the first one was delivered."""
        await call(
            broadcast, tenant_id=tenant.id, type="case:updated", data={"n": n}, permission="cases:read"
        )
        await call(broadcast, tenant_id=tenant.id, type="tick", data={"n": n})
        seen = []
        while (message := await receive_json(ws))["type"] != "tick" or message["data"]["n"] != n:
            seen.append(message)
        return {"type": "case:updated", "n": n} in [{"type": m["type"], **m["data"]} for m in seen]

    async def scenario():
        async with websockets.connect(ws_url(asgi_server, issue_for(user).token), open_timeout=10) as ws:
            await _subscribed(ws)
            assert await gated_message_arrives(ws, 0)
            await call(role_set_permissions, role=role, actor=admin_user, permissions=["tasks:read"])
            changed_at = asyncio.get_running_loop().time()
            for n in itertools.count(1):
                if not await gated_message_arrives(ws, n):
                    break
                assert asyncio.get_running_loop().time() - changed_at < RECHECK_WINDOW + 1
                await _pace(ws)
            # The principal is still valid: the socket stays open and ungated messages still arrive.
            await _subscribed(ws)
            assert not await gated_message_arrives(ws, n + 1)

    asyncio.run(scenario())
