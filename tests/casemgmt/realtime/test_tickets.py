"""`POST /ws/ticket` and `/ws?ticket=`: a one-use ticket opens one socket, and no JWT is in the URL.

Any authenticated principal may ask for a ticket (as any may open `/ws`): the endpoint has no
permission to lack (no 403) and no resource of a tenant (no 404); what a socket receives is held to
its principal's tenant and permissions (the other-tenant test below)."""

import asyncio
import contextlib
import json
import threading
import uuid

import pytest
import websockets
from django.test import override_settings
from websockets.exceptions import ConnectionClosed

from casemgmt.accounts.services import auth_logout
from casemgmt.accounts.tokens import issue_for, jwt_config
from casemgmt.realtime.events import broadcast
from casemgmt.realtime.tickets import ticket_issue, ticket_redeem
from shared.auth import tokens
from tests.support.asyncdb import call, receive_json

WS = pytest.mark.django_db(transaction=True)


def ticket_for(api, user) -> dict:
    response = api(user).post("/ws/ticket")
    assert response.status_code == 200, response.content
    return response.json()


async def closed_code(url: str) -> int:
    """The close code of a socket the server closes at once."""
    async with websockets.connect(url, open_timeout=10) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            await receive_json(ws)
    assert closed.value.rcvd is not None
    return closed.value.rcvd.code


@pytest.mark.django_db
def test_ticket_answers_a_ticket_and_its_expiry(api, admin_user):
    body = ticket_for(api, admin_user)
    assert set(body) == {"ticket", "expiresAt"} and body["expiresAt"].endswith("Z")
    assert len(body["ticket"]) >= 40


@pytest.mark.django_db
@pytest.mark.parametrize("authorization", [None, "Bearer garbage", "Basic abc"])
def test_ticket_needs_authentication(api, authorization):
    client = api(None)
    if authorization:
        client.credentials(HTTP_AUTHORIZATION=authorization)
    response = client.post("/ws/ticket")
    assert response.status_code == 401
    body = response.json()
    assert body["error"] is True and body["code"] == "not_authenticated"


@pytest.mark.django_db
def test_ticket_refuses_other_methods(api, admin_user):
    assert api(admin_user).get("/ws/ticket").status_code == 405


@pytest.mark.django_db
@pytest.mark.parametrize("cache", ["service", "embedded file cache"])
def test_a_ticket_is_redeemed_once_even_by_racing_redemptions(cache, tmp_path):
    """Sixteen threads present one ticket at the same moment: exactly one gets the credential, on
    the service's Redis cache and on the embedded default's file cache."""
    caches = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(tmp_path),
        }
    }
    with override_settings(**({"CACHES": caches} if cache != "service" else {})):
        for _ in range(5):
            ticket = ticket_issue(credential="credential-x").ticket
            start = threading.Barrier(16)
            results: list[str | None] = []

            def redeem(ticket=ticket, start=start, results=results):
                start.wait()
                results.append(ticket_redeem(ticket))

            threads = [threading.Thread(target=redeem) for _ in range(16)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert len(results) == 16 and [r for r in results if r is not None] == ["credential-x"]
        assert ticket_redeem(uuid.uuid4().hex) is None


@WS
@pytest.mark.worker
def test_a_ticket_opens_one_socket_once(asgi_server, api, tenant, other_tenant, admin_user, make_user):
    base = asgi_server.replace("http://", "ws://") + "/ws"
    ticket = ticket_for(api, admin_user)["ticket"]
    outsider_ticket = ticket_for(api, make_user(other_tenant, roles=["admin"]))["ticket"]

    async def scenario():
        async with (
            websockets.connect(f"{base}?ticket={ticket}", open_timeout=10) as ws,
            websockets.connect(f"{base}?ticket={outsider_ticket}", open_timeout=10) as outsider_ws,
        ):
            for socket in (ws, outsider_ws):
                await socket.send(json.dumps({"type": "ping"}))
                assert (await receive_json(socket))["type"] == "pong"
            await call(broadcast, tenant_id=tenant.id, type="case:updated", data={"caseId": "t1"})
            assert (await receive_json(ws))["data"] == {"caseId": "t1"}
            with pytest.raises(asyncio.TimeoutError):  # another tenant's ticket: nothing of this one
                await receive_json(outsider_ws, timeout=1)
            # Used: a second socket with the same ticket is closed as unauthenticated.
            assert await closed_code(f"{base}?ticket={ticket}") == 4401

    asyncio.run(scenario())


@WS
@pytest.mark.worker
@pytest.mark.parametrize(
    "query", ["", "?ticket=", "?ticket=unknown", "?token=garbage", "?ticket=x&token=JWT"]
)
def test_a_socket_without_a_valid_credential_is_closed_with_4401(asgi_server, admin_user, query):
    """A ticket that does not redeem is no credential, even beside a valid token."""
    query = query.replace("JWT", issue_for(admin_user).token)
    url = asgi_server.replace("http://", "ws://") + "/ws" + query
    assert asyncio.run(closed_code(url)) == 4401


@WS
@pytest.mark.worker
def test_a_ticket_socket_closes_once_its_token_is_logged_out(asgi_server, api, tenant, admin_user):
    token = issue_for(admin_user).token
    client = api(None)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    ticket = client.post("/ws/ticket").json()["ticket"]
    url = asgi_server.replace("http://", "ws://") + f"/ws?ticket={ticket}"

    async def scenario():
        async with websockets.connect(url, open_timeout=10) as ws:
            await ws.send(json.dumps({"type": "ping"}))
            assert (await receive_json(ws))["type"] == "pong"
            await call(lambda: auth_logout(claims=tokens.verify(jwt_config(), token)))
            for n in range(100):  # the principal is re-checked within a few seconds
                await call(broadcast, tenant_id=tenant.id, type="case:updated", data={"n": n})
                try:
                    await receive_json(ws)
                except ConnectionClosed as closed:
                    assert closed.rcvd is not None and closed.rcvd.code == 4401
                    return
                with contextlib.suppress(asyncio.TimeoutError):  # paces the broadcasts: the close we expect
                    await asyncio.wait_for(ws.wait_closed(), timeout=0.1)
            raise AssertionError("the socket outlived its logged-out token")

    asyncio.run(scenario())
