"""WebSocket events of the workflow engine, received by real clients of daphne."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import pytest
import websockets

from casemgmt.accounts.tokens import issue_for
from casemgmt.workflows.services import tasks_escalate_overdue
from shared.api.time import now_ms
from tests.casemgmt.workflows.conftest import task_step
from tests.support.asyncdb import call, receive_json

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


async def connect(base: str, user):
    ws = await websockets.connect(
        f"{base.replace('http://', 'ws://')}/ws?token={issue_for(user).token}", open_timeout=10
    )
    await ws.send(json.dumps({"type": "ping"}))
    assert (await receive_json(ws))["type"] == "pong"  # subscribed once the server answers
    return ws


def test_step_activated_and_task_assigned_reach_their_readers(
    asgi_server, flow, api, make_user, tenant, admin_user
):
    worker = make_user(tenant, permissions=["tasks:read", "tasks:claim", "tasks:complete"])
    flow.workflow([task_step("review"), task_step("payout", slaHours=1)])

    async def scenario():
        admin_ws, worker_ws = await connect(asgi_server, admin_user), await connect(asgi_server, worker)
        try:
            case = (await call(flow.case))["id"]
            message = await receive_json(admin_ws)
            assert message["type"] == "step:activated" and message["data"] == {
                "caseId": case,
                "stepId": "review",
            }
            assert message["timestamp"].endswith("Z")

            claimed = await call(api(worker).post, f"/tasks/{case}/review/claim")
            assert claimed.status_code == 200
            message = await receive_json(
                worker_ws
            )  # the worker lacks cases:read, so this is its first message
            assert message["type"] == "task:assigned"
            assert message["data"] == {"caseId": case, "stepId": "review", "assignedTo": str(worker.id)}

            body = {"assignTo": str(admin_user.id)}
            moved = await call(api(worker).post, f"/tasks/{case}/review/reassign", body, format="json")
            assert moved.status_code == 200
            message = await receive_json(admin_ws)  # task:assigned for the worker never reached the admin
            assert message["type"] == "task:assigned" and message["data"]["assignedTo"] == str(admin_user.id)

            done = await call(
                api(admin_user).post,
                f"/tasks/{case}/review/complete",
                {"data": {"approved": True}},
                format="json",
            )
            assert done.status_code == 200
            while (message := await receive_json(admin_ws))["type"] != "step:activated":
                pass  # case:updated and others may come first
            assert message["data"] == {"caseId": case, "stepId": "payout"}
            with pytest.raises(asyncio.TimeoutError):
                await receive_json(worker_ws, timeout=1)

            # The SLA job notifies the tenant's task readers of an escalation.
            assert await call(tasks_escalate_overdue, now=now_ms() + timedelta(days=30)) == 1
            message = await receive_json(worker_ws)
            assert message["type"] == "task:escalated"
            assert message["data"]["caseId"] == case and message["data"]["stepId"] == "payout"
        finally:
            await admin_ws.close()
            await worker_ws.close()

    asyncio.run(scenario())
