"""Workflow definitions: drafts, publish validation, versions, withdraw, permissions."""

from __future__ import annotations

import pytest

from tests.casemgmt.workflows.conftest import FORM, audit_actions, ok, task_step

pytestmark = pytest.mark.django_db


def draft(flow, steps, **extra):
    body = {"caseTypeKey": flow.key, "name": "Claims", "steps": steps, **extra}
    return flow.client.post("/workflows", body, format="json")


def test_create_read_edit_publish_withdraw(flow, tenant):
    created = ok(draft(flow, [task_step("review")], slaHours=48, outcomes=["paid", "denied"]), 201)
    assert created["status"] == "draft" and created["version"] == 1 and created["isDefault"] is False
    assert created["caseTypeKey"] == flow.key and created["slaHours"] == 48 and created["autoClose"] is False
    assert created["outcomes"] == ["paid", "denied"] and created["publishedAt"] is None
    assert created["steps"] == [task_step("review")] and created["createdAt"].endswith("Z")
    assert set(created) == {
        "id", "caseTypeKey", "name", "version", "status", "isDefault", "autoClose", "slaHours", "outcomes",
        "steps", "createdAt", "updatedAt", "publishedAt",
    }  # fmt: skip
    url = f"/workflows/{created['id']}"
    assert ok(flow.client.get(url)) == created

    edited = ok(
        flow.client.put(
            url, {"name": "Claims v1", "steps": [task_step("review"), task_step("pay")]}, format="json"
        )
    )
    assert edited["name"] == "Claims v1" and [s["id"] for s in edited["steps"]] == ["review", "pay"]

    published = ok(flow.client.post(f"{url}/publish"))
    assert published["status"] == "published" and published["isDefault"] is True and published["publishedAt"]
    assert published["steps"][1]["dependsOn"] == ["review"] and published["steps"][0]["dependsOn"] == []
    frozen = flow.client.put(url, {"name": "x", "steps": []}, format="json")
    assert frozen.status_code == 409 and frozen.json()["code"] == "invalid_state"
    assert flow.client.post(f"{url}/publish").json()["code"] == "invalid_state"

    listing = ok(flow.client.get(f"/workflows?caseTypeKey={flow.key}"))
    assert listing["total"] == 1 and listing["data"][0]["id"] == created["id"] and listing["next"] is None
    assert ok(flow.client.get("/workflows?status=draft"))["total"] == 0
    for bad in ("status=open", "limit=101", "offset=-1"):
        assert flow.client.get(f"/workflows?{bad}").status_code == 400, bad
    assert flow.client.get("/workflows/00000000-0000-0000-0000-000000000000").status_code == 404

    withdrawn = ok(flow.client.post(f"{url}/withdraw"))
    assert withdrawn["status"] == "withdrawn" and withdrawn["isDefault"] is False
    assert flow.client.post(f"{url}/withdraw").json()["code"] == "invalid_state"
    assert audit_actions(tenant.id, f"workflows/{created['id']}") == [
        "workflow:created", "workflow:edited", "workflow:published", "workflow:withdrawn",
    ]  # fmt: skip


def test_publish_lists_every_problem(flow):
    steps = [
        {"id": "a", "name": "A", "type": "task", "formSchema": {"type": "nonsense"}},
        {"id": "a", "name": "A2", "type": "robot"},
        {"id": "c", "name": "C", "type": "task", "dependsOn": ["zzz"], "condition": "{{#if x}}open"},
        {"id": "d", "name": "D", "type": "agent", "promptTemplate": "missing", "responseFormat": "xml"},
        {"id": "e", "name": "E", "type": "task", "slaHours": -1, "outcomes": [], "assignTo": "bob"},
    ]
    created = ok(draft(flow, steps), 201)
    response = flow.client.post(f"/workflows/{created['id']}/publish")
    assert response.status_code == 400
    errors = {(e["field"], e["error"].split(":")[0]) for e in response.json()["details"]["errors"]}
    fields = {field for field, _ in errors}
    assert {
        "steps[0].formSchema", "steps[1].type", "steps[2].condition", "steps[3].promptTemplate",
        "steps[3].responseFormat", "steps[4].slaHours", "steps[4].outcomes", "steps[4].assignTo",
    } <= fields  # fmt: skip
    assert ok(flow.client.get(f"/workflows/{created['id']}"))["status"] == "draft"


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ([task_step("a"), task_step("a")], "duplicate step id"),
        ([task_step("a", dependsOn=["b"]), task_step("b")], "dependency cycle"),
        ([task_step("a", dependsOn=["a"])], "cannot depend on itself"),
        ([task_step("a", dependsOn=["nope"])], "unknown step"),
        ([], "at least one step"),
    ],
)
def test_publish_refuses_broken_graphs(flow, steps, message):
    created = ok(draft(flow, steps), 201)
    response = flow.client.post(f"/workflows/{created['id']}/publish")
    assert response.status_code == 400 and message in response.json()["message"]


def test_draft_body_is_validated(flow):
    assert draft(flow, "steps").status_code == 400
    missing_key = flow.client.post(
        "/workflows", {"caseTypeKey": "no_such_type", "name": "x", "steps": []}, format="json"
    )
    assert missing_key.status_code == 400 and missing_key.json()["details"]["field"] == "caseTypeKey"
    empty = flow.client.post("/workflows", {}, format="json")
    assert {e["field"] for e in empty.json()["details"]["errors"]} >= {"caseTypeKey", "name", "steps"}


def test_new_version_becomes_default_and_cases_keep_their_version(flow):
    first = flow.workflow([task_step("review")])
    old_case = flow.case()
    second = flow.workflow([task_step("triage"), task_step("review")])
    assert second["version"] == 2 and second["isDefault"] is True
    assert ok(flow.client.get(f"/workflows/{first['id']}"))["isDefault"] is False
    new_case = flow.case()
    assert ok(flow.client.get(f"/cases/{old_case['id']}"))["workflow"]["version"] == 1
    detail = ok(flow.client.get(f"/cases/{new_case['id']}"))["workflow"]
    assert detail["id"] == second["id"] and detail["version"] == 2
    assert [s["id"] for s in detail["steps"]] == ["triage", "review"]
    step = detail["steps"][0]
    assert step["status"] == "active" and step["type"] == "task" and step["activatedAt"].endswith("Z")


def test_permissions_and_tenancy(flow, api, make_user, tenant, other_tenant):
    created = ok(draft(flow, [task_step("review")]), 201)
    url = f"/workflows/{created['id']}"
    reader = make_user(tenant, permissions=["workflows:read"])
    writer = make_user(tenant, permissions=["workflows:read", "workflows:write"])
    designer = make_user(tenant, roles=["workflow_designer"])
    outsider = make_user(other_tenant, roles=["admin"])
    body = {"caseTypeKey": flow.key, "name": "x", "steps": [task_step("a")]}
    for method, path, data in [("get", "/workflows", None), ("post", "/workflows", body), ("get", url, None),
                               ("put", url, body), ("post", f"{url}/publish", None), ("post", f"{url}/withdraw", None)]:  # fmt: skip
        assert getattr(api(None), method)(path, data, format="json").status_code == 401
        assert (
            getattr(api(make_user(tenant, permissions=["cases:read"])), method)(
                path, data, format="json"
            ).status_code
            == 403
        )
    for method, path in [("get", url), ("put", url), ("post", f"{url}/publish"), ("post", f"{url}/withdraw")]:
        assert getattr(api(outsider), method)(path, body, format="json").status_code == 404
    assert ok(api(outsider).get("/workflows"))["total"] == 0
    assert api(reader).get(url).status_code == 200
    assert api(reader).put(url, body, format="json").status_code == 403
    assert api(writer).put(url, body, format="json").status_code == 200
    assert api(writer).post(f"{url}/publish").status_code == 403  # publishing needs workflows:publish
    assert api(designer).post(f"{url}/publish").status_code == 200  # workflows:* grants it


def test_publish_accepts_form_schema_condition_and_agent_config(flow):
    ok(
        flow.client.post(
            "/prompt-templates", {"name": "summarise", "template": "Sum {{case_number}}"}, format="json"
        ),
        201,
    )
    steps = [
        {"id": "triage", "name": "Triage", "type": "task", "formSchema": FORM, "condition": "gt case_data.amount 5"},
        {"id": "summary", "name": "Summary", "type": "agent", "promptTemplate": {"name": "summarise", "version": 1},
         "outputKey": "summary", "responseFormat": "json", "onFailure": "escalate"},
    ]  # fmt: skip
    assert flow.workflow(steps)["status"] == "published"
