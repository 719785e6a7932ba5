"""Case comments over HTTP: create and list, plain text as given, `@email` mentions, audit, and the
live `case:commented` / `case:mentioned` messages on a real WebSocket."""

from __future__ import annotations

import asyncio
import json

import pytest
import websockets

from casemgmt.accounts.tokens import issue_for
from casemgmt.audit.models import AuditEvent
from tests.support.asyncdb import call, receive_json

pytestmark = pytest.mark.django_db


def test_comments_are_stored_as_given_listed_oldest_first_and_audited(
    api, admin_user, make_case, tenant, make_user
):
    case = make_case()
    writer = make_user(tenant, permissions=["cases:read", "cases:update"], email="writer@acme.test")
    mentioned = make_user(tenant, permissions=["cases:read"], email="ann@acme.test")
    body = "<b>Hi</b> @ann@acme.test, see @nobody@acme.test  "
    created = api(writer).post(f"/cases/{case.id}/comments", {"body": body}, format="json")
    assert created.status_code == 201, created.content
    comment = created.json()
    assert set(comment) == {"id", "body", "author", "createdAt"}
    assert comment["body"] == body and comment["author"] == {"id": str(writer.id), "email": writer.email}
    second = api(admin_user).post(f"/cases/{case.id}/comments", {"body": "second"}, format="json").json()

    listed = api(mentioned).get(f"/cases/{case.id}/comments")
    assert listed.status_code == 200
    page = listed.json()
    assert page["total"] == 2 and page["limit"] == 50 and page["offset"] == 0
    assert [c["id"] for c in page["data"]] == [comment["id"], second["id"]]

    event = AuditEvent.objects.get(
        tenant_id=tenant.id, action="case:commented", changes__commentId=comment["id"]
    )
    assert event.resource == f"cases/{case.id}" and event.changes["mentions"] == [str(mentioned.id)]

    for bad in ("", "x" * 10_001, 5, None):
        response = api(writer).post(f"/cases/{case.id}/comments", {"body": bad}, format="json")
        assert response.status_code == 400, bad


def test_comment_permissions_other_tenant_and_anonymous(api, make_case, reader, outsider, tenant, make_user):
    case = make_case()
    assert api(reader).post(f"/cases/{case.id}/comments", {"body": "x"}, format="json").status_code == 403
    assert api(make_user(tenant, permissions=[])).get(f"/cases/{case.id}/comments").status_code == 403
    assert api(outsider).get(f"/cases/{case.id}/comments").status_code == 404
    assert api(outsider).post(f"/cases/{case.id}/comments", {"body": "x"}, format="json").status_code == 404
    assert api(None).get(f"/cases/{case.id}/comments").status_code == 401
    assert api(None).post(f"/cases/{case.id}/comments", {"body": "x"}, format="json").status_code == 401


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_comment_arrives_live_and_mentions_reach_only_the_named_user(
    asgi_server, api, admin_user, make_case, reader, tenant, make_user
):
    case = make_case()
    ann = make_user(tenant, permissions=["cases:read"], email="ann.live@acme.test")
    url = asgi_server.replace("http://", "ws://") + "/ws?token="

    async def scenario():
        async with (
            websockets.connect(url + issue_for(reader).token, open_timeout=10) as ws,
            websockets.connect(url + issue_for(ann).token, open_timeout=10) as ann_ws,
        ):
            for socket in (ws, ann_ws):
                await socket.send(json.dumps({"type": "ping"}))
                assert (await receive_json(socket))["type"] == "pong"
            response = await call(
                lambda: api(admin_user).post(
                    f"/cases/{case.id}/comments", {"body": "over to @ann.live@acme.test"}, format="json"
                )
            )
            assert response.status_code == 201
            comment_id = response.json()["id"]
            message = await receive_json(ws)
            assert message["type"] == "case:commented"
            assert message["data"] == {"caseId": str(case.id), "commentId": comment_id}
            received = [await receive_json(ann_ws), await receive_json(ann_ws)]
            assert sorted(m["type"] for m in received) == ["case:commented", "case:mentioned"]
            with pytest.raises(asyncio.TimeoutError):  # the mention reached ann alone
                await receive_json(ws, timeout=1)

    asyncio.run(scenario())
