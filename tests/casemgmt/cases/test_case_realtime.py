"""A real WebSocket client (against daphne) receives `case:updated` after a PATCH commits."""

import asyncio
import json

import pytest
import websockets

from casemgmt.accounts.tokens import issue_for
from tests.support.asyncdb import call, receive_json

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


def test_patch_and_close_broadcast_case_updated_to_the_tenant(
    asgi_server, api, admin_user, reader, outsider, make_case
):
    case = make_case()
    url = asgi_server.replace("http://", "ws://") + "/ws?token="

    async def scenario():
        async with (
            websockets.connect(url + issue_for(reader).token, open_timeout=10) as ws,
            websockets.connect(url + issue_for(outsider).token, open_timeout=10) as foreign_ws,
        ):
            for socket in (ws, foreign_ws):  # subscribed once the server answers a ping
                await socket.send(json.dumps({"type": "ping"}))
                assert (await receive_json(socket))["type"] == "pong"
            response = await call(
                lambda: api(admin_user).patch(
                    f"/cases/{case.id}/data", {"data": {"amount": 7}, "version": 1}, format="json"
                )
            )
            assert response.status_code == 200
            message = await receive_json(ws)
            assert message["type"] == "case:updated" and message["timestamp"].endswith("Z")
            assert message["data"] == {"caseId": str(case.id), "version": 2, "changedBy": str(admin_user.id)}
            closed = await call(lambda: api(admin_user).post(f"/cases/{case.id}/close", {}, format="json"))
            assert closed.status_code == 200
            message = await receive_json(ws)
            assert message["type"] == "case:updated"
            assert message["data"] == {
                "caseId": str(case.id),
                "version": 2,
                "changedBy": str(admin_user.id),
                "status": "closed",
            }
            with pytest.raises(asyncio.TimeoutError):
                await receive_json(foreign_ws, timeout=1)

    asyncio.run(scenario())
