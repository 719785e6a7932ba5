"""`accessTeams` on a case type, enforced by PostgreSQL's row-level security: non-members see none
of its cases or tasks on any read path (detail, list, search, inbox, task, comments, dashboard,
reports, WebSocket); members and holders of admin:* do."""

from __future__ import annotations

import asyncio
import json

import pytest
import websockets

from casemgmt.accounts.tokens import issue_for
from tests.casemgmt.vault.conftest import file_of, vault_root  # noqa: F401 - fixture reused here
from tests.casemgmt.workflows.conftest import ok, task_step
from tests.casemgmt.workflows.test_teams import add_member, make_team
from tests.support.asyncdb import call, receive_json

READER = [
    "cases:read",
    "cases:update",
    "tasks:read",
    "tasks:claim",
    "tasks:complete",
    "reports:read",
    "vault:read",
]


def restricted_setup(flow, make_user, tenant):
    team = make_team(flow.client, "Fraud")
    member, outsider = make_user(tenant, permissions=READER), make_user(tenant, permissions=READER)
    add_member(flow.client, team, member)
    secret_key = f"fraud_{flow.key[-6:]}"
    typed = ok(
        flow.client.post(
            "/case-types",
            {
                "key": secret_key,
                "displayName": "Fraud",
                "schema": {"type": "object"},
                "accessTeams": [team["id"]],
            },
            format="json",
        ),
        201,
    )
    assert typed["accessTeams"] == [team["id"]]
    flow.workflow([task_step("review")])  # the open case type's workflow
    open_case = flow.case({"title": "zebraword"})
    body = {"caseTypeKey": secret_key, "name": "Secret", "steps": [task_step("review")]}
    draft = ok(flow.client.post("/workflows", body, format="json"), 201)
    ok(flow.client.post(f"/workflows/{draft['id']}/publish"))
    secret = ok(
        flow.client.post(
            "/cases", {"case_type_key": secret_key, "case_data": {"t": "zebraword"}}, format="json"
        ),
        201,
    )
    return member, outsider, open_case, secret, secret_key


@pytest.mark.django_db
def test_access_teams_hide_cases_and_tasks_on_every_read_path(flow, api, make_user, tenant, other_tenant):
    member, outsider, open_case, secret, secret_key = restricted_setup(flow, make_user, tenant)
    them, me, admin = api(outsider), api(member), flow.client

    assert them.get(f"/cases/{secret['id']}").status_code == 404
    assert me.get(f"/cases/{secret['id']}").status_code == 200
    assert api(make_user(other_tenant, permissions=["*"])).get(f"/cases/{secret['id']}").status_code == 404

    assert {c["id"] for c in ok(them.get("/cases"))["data"]} == {open_case["id"]}
    assert {c["id"] for c in ok(me.get("/cases"))["data"]} == {open_case["id"], secret["id"]}
    assert ok(them.get("/cases"))["total"] == 1

    def search_ids(client):
        return {hit["id"] for hit in ok(client.get("/cases/search?q=zebraword"))["data"]}

    assert search_ids(them) == {open_case["id"]} and search_ids(admin) == {open_case["id"], secret["id"]}

    def inbox_cases(client):
        return {t["caseId"] for t in ok(client.get("/tasks/inbox"))["data"]}

    assert inbox_cases(them) == {open_case["id"]} and inbox_cases(me) == {open_case["id"], secret["id"]}
    assert them.get(f"/tasks/{secret['id']}/review").status_code == 404
    assert them.post(f"/tasks/{secret['id']}/review/claim").status_code == 404
    assert them.get(f"/cases/{secret['id']}/comments").status_code == 404
    assert them.post(f"/cases/{secret['id']}/comments", {"body": "x"}, format="json").status_code == 404

    def dashboard_total(client):
        return sum(ok(client.get("/cases/dashboard"))["byStatus"].values())

    assert dashboard_total(them) == 1 and dashboard_total(me) == 2

    def summary_total(client):
        return ok(client.get("/reports/summary"))["totalCases"]

    assert summary_total(them) == 1 and summary_total(me) == 2

    # A document of the case is as hidden as the case: by id, and no signed link for it.
    document = ok(
        admin.post(f"/cases/{secret['id']}/documents", {"file": file_of(b"secret")}, format="multipart"), 201
    )
    assert them.get(f"/vault/download/{document['id']}").status_code == 404
    assert them.post(f"/vault/signed-url/{document['id']}").status_code == 404
    assert them.get(f"/cases/{secret['id']}/documents").status_code == 404
    assert me.get(f"/vault/download/{document['id']}").status_code == 200

    # Creating a case of the type needs membership too (it could not read the case it made).
    made = them.post("/cases", {"case_type_key": secret_key, "case_data": {}}, format="json")
    assert made.status_code == 403 and made.json()["code"] == "permission_denied"
    assert api(None).get(f"/cases/{secret['id']}").status_code == 401


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_access_teams_filter_websocket_messages(asgi_server, flow, api, make_user, tenant):
    member, outsider, open_case, secret, _ = restricted_setup(flow, make_user, tenant)
    url = asgi_server.replace("http://", "ws://") + "/ws?token="

    async def scenario():
        async with (
            websockets.connect(url + issue_for(member).token, open_timeout=10) as member_ws,
            websockets.connect(url + issue_for(outsider).token, open_timeout=10) as outsider_ws,
        ):
            for socket in (member_ws, outsider_ws):
                await socket.send(json.dumps({"type": "ping"}))
                assert (await receive_json(socket))["type"] == "pong"
            for case in (secret, open_case):
                response = await call(
                    lambda c=case: flow.client.post(
                        f"/cases/{c['id']}/comments", {"body": "hi"}, format="json"
                    )
                )
                assert response.status_code == 201
            heard = [(await receive_json(member_ws))["data"]["caseId"] for _ in range(2)]
            assert heard == [secret["id"], open_case["id"]]
            first = await receive_json(outsider_ws)  # the secret case's message never reached it
            assert first["data"]["caseId"] == open_case["id"]

    asyncio.run(scenario())
