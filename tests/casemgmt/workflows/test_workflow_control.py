"""Workflow control over HTTP: rework routes, timer, wait and sub-case steps, messages, and the
migration of live cases to another workflow version."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from casemgmt.audit.models import AuditEvent
from casemgmt.workflows.models import CaseStep, Workflow
from casemgmt.workflows.services.control import steps_due_fire
from shared.api.time import now_ms
from shared.api.time import parse_iso as _parse_iso
from tests.casemgmt.conftest import admin_client
from tests.casemgmt.webhooks.test_inbound import deliver
from tests.casemgmt.workflows.conftest import CASE_SCHEMA, Flow, audit_actions, ok, task_step

pytestmark = pytest.mark.django_db

REVIEW = {"outcomes": ["approve", "rework"], "routes": {"rework": "submit"}}


def publish_errors(flow: Flow, steps: list[dict]) -> list[dict]:
    body = {"caseTypeKey": flow.key, "name": "Flow", "steps": steps}
    draft = ok(flow.client.post("/workflows", body, format="json"), 201)
    response = flow.client.post(f"/workflows/{draft['id']}/publish")
    assert response.status_code == 400, response.content
    return response.json()["details"]["errors"]


def complete(flow: Flow, case_id: str, step_id: str, outcome: str | None = None, **data) -> dict:
    body = {"data": {"approved": True, **data}, **({"outcome": outcome} if outcome else {})}
    return ok(flow.client.post(f"/tasks/{case_id}/{step_id}/complete", body, format="json"))


def parse_iso(raw: str):
    return _parse_iso(raw, "test")


def fire_due(case_id: str, step_id: str) -> int:
    """The timer's time comes: its fire time is moved to the past, then the due-steps job runs."""
    CaseStep.objects.filter(case_id=case_id, step_id=step_id).update(fire_at=now_ms() - timedelta(seconds=1))
    return steps_due_fire()


def child_type(flow: Flow) -> str:
    key = f"inspection_{flow.key[-6:]}"
    schema = {"type": "object", "required": ["title"], "properties": CASE_SCHEMA["properties"]}
    ok(
        flow.client.post(
            "/case-types", {"key": key, "displayName": "Inspection", "schema": schema}, format="json"
        ),
        201,
    )
    return key


# ---------------------------------------------------------------------------------------- publish


@pytest.mark.parametrize(
    ("step", "field", "error"),
    [
        ({"routes": {"rework": "pay"}}, "steps[1].routes.rework", "is not before this step"),
        ({"routes": {"rework": "nowhere"}}, "steps[1].routes.rework", "unknown step"),
        ({"routes": {"rework": "review"}}, "steps[1].routes.rework", "is not before this step"),
        ({"routes": {"other": "submit"}}, "steps[1].routes.other", "is not one of the step's outcomes"),
    ],
)
def test_a_route_forward_to_itself_or_unknown_is_refused_at_publish(flow, step, field, error):
    review = task_step("review", outcomes=["approve", "rework"], **step)
    errors = publish_errors(flow, [task_step("submit"), review, task_step("pay")])
    assert any(e["field"] == field and error in e["error"] for e in errors), errors


def test_new_step_types_are_checked_at_publish(flow):
    steps = [
        {"id": "t1", "name": "T1", "type": "timer"},
        {"id": "t2", "name": "T2", "type": "timer", "after": "P1Y"},
        {"id": "t3", "name": "T3", "type": "timer", "after": "PT1H", "until": "{{now}}"},
        {"id": "t4", "name": "T4", "type": "timer", "until": "{{#if}}"},
        {"id": "w1", "name": "W1", "type": "wait"},
        {"id": "w2", "name": "W2", "type": "wait", "message": "no/slash"},
        {"id": "c1", "name": "C1", "type": "case", "caseTypeKey": "no_such_type"},
        {"id": "c2", "name": "C2", "type": "case", "caseTypeKey": flow.key, "data": {"title": "{{#each}}"}},
        {"id": "w3", "name": "W3", "type": "wait", "message": "docs", "routes": {"x": "t1"}},
    ]
    fields = {e["field"] for e in publish_errors(flow, steps)}
    assert {"steps[0]", "steps[1].after", "steps[2]", "steps[3].until", "steps[4].message", "steps[5].message",
            "steps[6].caseTypeKey", "steps[7].data.title"} <= fields  # fmt: skip
    # Routes are checked once every step is well formed: only task steps take them.
    errors = publish_errors(
        flow, [task_step("a"), {"id": "w", "name": "W", "type": "wait", "message": "m", "routes": {"x": "a"}}]
    )
    assert errors == [{"field": "steps[1].routes", "error": "only task steps take routes"}]


def test_the_admin_publishes_new_step_types_with_the_same_checks(flow, admin_user):
    def draft(steps) -> Workflow:
        body = {"caseTypeKey": flow.key, "name": "Drafted", "steps": steps}
        return Workflow.objects.get(pk=ok(flow.client.post("/workflows", body, format="json"), 201)["id"])

    def publish(workflow):
        response = admin_client(admin_user).post(
            "/admin/workflows/workflow/",
            {"action": "publish", "_selected_action": [str(workflow.pk)], "confirmed": "yes"},
            follow=True,
        )
        workflow.refresh_from_db()
        return [str(m) for m in response.context["messages"]]

    bad = draft(
        [
            task_step("submit"),
            task_step("review", outcomes=["ok", "redo"], routes={"redo": "pay"}),
            task_step("pay"),
        ]
    )
    assert any("is not before this step" in m for m in publish(bad)) and bad.status == Workflow.DRAFT
    good = draft([
        task_step("submit"), task_step("review", **REVIEW),
        {"id": "cool", "name": "Cool off", "type": "timer", "after": "PT48H"},
        {"id": "docs", "name": "Documents", "type": "wait", "message": "documents"},
        {"id": "inspect", "name": "Inspect", "type": "case", "caseTypeKey": flow.key, "data": {"title": "x"}},
    ])  # fmt: skip
    publish(good)
    assert good.status == Workflow.PUBLISHED


# ---------------------------------------------------------------------------------------- rework


def test_a_rework_loop_taken_twice_then_approved(flow):
    flow.workflow([task_step("submit"), task_step("review", **REVIEW), task_step("pay")])
    case = flow.case()
    for round_ in (1, 2):
        complete(flow, case["id"], "submit", note=f"try {round_}")
        done = complete(flow, case["id"], "review", "rework")
        assert done["status"] == "completed" and done["outcome"] == "rework"  # the answer is the completion
        assert flow.statuses(case["id"]) == {"submit": "active", "review": "pending", "pay": "pending"}
        task = ok(flow.client.get(f"/tasks/{case['id']}/submit"))
        assert task["status"] == "unclaimed" and task["data"] is None  # a new task
    complete(flow, case["id"], "submit", note="try 3")
    complete(flow, case["id"], "review", "approve")

    detail = ok(flow.client.get(f"/cases/{case['id']}"))
    steps = {s["id"]: s for s in detail["workflow"]["steps"]}
    assert {k: (s["status"], s["iteration"]) for k, s in steps.items()} == {
        "submit": ("completed", 3), "review": ("completed", 3), "pay": ("active", 1),
    }  # fmt: skip
    history = detail["workflow"]["history"]
    assert [(h["stepId"], h["iteration"], h["outcome"]) for h in history] == [
        ("submit", 1, None), ("review", 1, "rework"), ("submit", 2, None), ("review", 2, "rework"),
    ]  # fmt: skip
    assert [h["result"]["note"] for h in history if h["stepId"] == "submit"] == ["try 1", "try 2"]
    assert all(h["status"] == "completed" and h["completedBy"] == str(flow.admin.id) for h in history)
    actions = audit_actions(flow.admin.tenant_id, f"cases/{case['id']}")
    assert actions.count("workflow:rerouted") == 2 and actions.count("task:completed") == 6
    assert ok(flow.client.get(f"/tasks/{case['id']}/review"))["outcome"] == "approve"


# ---------------------------------------------------------------------------------------- timer


def test_a_timer_fires_once_when_its_time_comes(flow):
    flow.workflow([{"id": "wait", "name": "Cool off", "type": "timer", "after": "PT48H"}, task_step("next")])
    case = flow.case()
    timer = flow.steps(case["id"])["wait"]
    assert parse_iso(timer["fireAt"]) - parse_iso(timer["activatedAt"]) == timedelta(hours=48)
    assert steps_due_fire() == 0  # not yet
    assert fire_due(case["id"], "wait") == 1
    assert steps_due_fire() == 0  # a second run (another beat) finds nothing
    step = CaseStep.objects.get(case_id=case["id"], step_id="wait")
    assert step.status == "completed" and parse_iso(step.result["firedAt"]) >= step.fire_at
    assert flow.statuses(case["id"]) == {"wait": "completed", "next": "active"}
    assert audit_actions(flow.admin.tenant_id, f"cases/{case['id']}").count("timer:fired") == 1


def test_a_timer_until_a_time_from_case_data_and_one_that_cannot_render(flow):
    flow.workflow([
        {"id": "wait", "name": "Until", "type": "timer", "until": "{{case_data.title}}", "onFailure": "skip"},
        task_step("next"),
    ])  # fmt: skip
    case = flow.case({"title": "2031-05-01T09:30:00+02:00"})
    assert flow.steps(case["id"])["wait"]["fireAt"] == "2031-05-01T07:30:00.000Z"
    bad = flow.case({"title": "next tuesday"})
    assert flow.statuses(bad["id"]) == {"wait": "active", "next": "pending"}
    assert steps_due_fire() == 1  # the bad time fails on the sweep's next pass, as onFailure says
    assert flow.statuses(bad["id"]) == {"wait": "skipped", "next": "active"}
    assert "not an ISO 8601 time" in CaseStep.objects.get(case_id=bad["id"], step_id="wait").error


# ---------------------------------------------------------------------------------------- wait


def test_a_message_completes_the_waiting_step(flow, api, make_user, tenant, other_tenant):
    flow.workflow([task_step("first"), {"id": "docs", "name": "Docs", "type": "wait", "message": "documents"},
                   task_step("last")])  # fmt: skip
    case = flow.case()
    url = f"/cases/{case['id']}/messages/documents"
    refused = flow.client.post(url, {"data": {"n": 1}}, format="json")
    assert refused.status_code == 409 and refused.json()["code"] == "invalid_state"  # not reached yet
    complete(flow, case["id"], "first")

    assert api(None).post(url, {}, format="json").status_code == 401
    assert api(make_user(tenant, permissions=["cases:read"])).post(url, {}, format="json").status_code == 403
    assert api(make_user(other_tenant, roles=["admin"])).post(url, {}, format="json").status_code == 404
    assert flow.client.post(f"/cases/{case['id']}/messages/other", {}, format="json").status_code == 409
    worker = make_user(tenant, permissions=["cases:update"])
    body = ok(api(worker).post(url, {"data": {"pages": 3}}, format="json"))
    assert body["stepId"] == "docs" and body["status"] == "completed" and body["result"] == {"pages": 3}
    assert flow.statuses(case["id"]) == {"first": "completed", "docs": "completed", "last": "active"}
    assert flow.client.post(url, {}, format="json").status_code == 409  # already done
    received = AuditEvent.objects.get(tenant_id=tenant.id, action="case:message_received")
    assert received.actor == str(worker.id) and received.changes["message"] == "documents"


def test_a_wait_completed_by_an_inbound_webhook(flow):
    flow.workflow(
        [{"id": "paid", "name": "Payment", "type": "wait", "message": "payment"}, task_step("close")]
    )
    case = flow.case({"title": "Claim"})
    no_pointer = {"path": "pay/x", "caseTypeKey": flow.key, "message": "payment"}
    assert flow.client.post("/admin/webhooks/inbound", no_pointer, format="json").status_code == 400
    body = {"path": "payments", "caseTypeKey": flow.key, "mapping": {"/amount": "/paid"},
            "casePointer": "/case", "message": "payment"}  # fmt: skip
    hook = ok(flow.client.post("/admin/webhooks/inbound", body, format="json"), 201)
    assert hook["message"] == "payment"
    response = deliver(hook, {"case": case["caseNumber"], "paid": 120})
    assert response.status_code == 202, response.content
    assert response.json()["status"] == "message" and response.json()["caseId"] == case["id"]
    step = CaseStep.objects.get(case_id=case["id"], step_id="paid")
    assert step.status == "completed" and step.result == {"amount": 120}
    assert flow.statuses(case["id"]) == {"paid": "completed", "close": "active"}
    assert ok(flow.client.get(f"/cases/{case['id']}"))["data"] == {"title": "Claim"}  # not merged
    again = deliver(hook, {"case": case["caseNumber"], "paid": 1})
    assert again.status_code == 409 and again.json()["code"] == "invalid_state"  # nothing waits now


# ---------------------------------------------------------------------------------------- sub-case


def sub_case_flow(flow: Flow, **extra) -> str:
    key = child_type(flow)
    inspect = {"id": "inspect", "name": "Inspect", "type": "case", "caseTypeKey": key,
               "data": {"title": "{{case_data.title}}", "kind": "inspection of {{case_data.title}}",
                        "amount": "{{case_data.amount}}"}, **extra}  # fmt: skip
    flow.workflow([inspect, task_step("settle")])
    return key


def test_a_child_case_closed_completes_the_parent_step(flow):
    key = sub_case_flow(flow)
    parent = flow.case({"title": "Roof", "amount": 900})
    step = flow.steps(parent["id"])["inspect"]
    detail = ok(flow.client.get(f"/cases/{parent['id']}"))
    assert detail["parentId"] is None and [c["id"] for c in detail["children"]] == [step["childCaseId"]]
    child = ok(flow.client.get(f"/cases/{step['childCaseId']}"))
    assert child["caseTypeKey"] == key and child["parentId"] == parent["id"] and child["children"] == []
    # A value that is one whole expression keeps its JSON type; other strings render as text.
    assert child["data"] == {"title": "Roof", "kind": "inspection of Roof", "amount": 900}
    assert detail["children"][0] == {"id": child["id"], "caseNumber": child["caseNumber"], "status": "active"}

    ok(flow.client.post(f"/cases/{child['id']}/close", {"outcome": "sound"}, format="json"))
    done = CaseStep.objects.get(case_id=parent["id"], step_id="inspect")
    assert done.status == "completed"
    assert done.result == {"caseId": child["id"], "caseNumber": child["caseNumber"], "outcome": "sound"}
    assert flow.statuses(parent["id"]) == {"inspect": "completed", "settle": "active"}
    assert ok(flow.client.get(f"/cases/{parent['id']}"))["children"][0]["status"] == "closed"


@pytest.mark.parametrize(
    ("on_failure", "expected"),
    [
        ("skip", {"inspect": "skipped", "settle": "active"}),
        (None, {"inspect": "failed", "settle": "skipped"}),
    ],
)
def test_a_child_case_cancelled_fails_the_parent_step_as_on_failure_says(flow, on_failure, expected):
    sub_case_flow(flow, **({"onFailure": on_failure} if on_failure else {}))
    parent = flow.case({"title": "Roof", "amount": 900})
    child_id = flow.steps(parent["id"])["inspect"]["childCaseId"]
    ok(flow.client.post(f"/cases/{child_id}/cancel", {"reason": "duplicate"}, format="json"))
    assert flow.statuses(parent["id"]) == expected
    step = CaseStep.objects.get(case_id=parent["id"], step_id="inspect")
    assert "was cancelled" in step.error
    failed = AuditEvent.objects.get(tenant_id=flow.admin.tenant_id, action="step:failed")
    assert failed.changes["onFailure"] == (on_failure or "fail_case")


def test_a_child_that_cannot_be_created_fails_the_step_on_the_next_sweep(flow):
    sub_case_flow(flow, onFailure="skip")
    parent = flow.case({"amount": 5})  # no title: the child's title is null, its schema wants a string
    assert flow.statuses(parent["id"]) == {"inspect": "active", "settle": "pending"}
    assert steps_due_fire() == 1
    assert flow.statuses(parent["id"]) == {"inspect": "skipped", "settle": "active"}
    assert "child case not created" in CaseStep.objects.get(case_id=parent["id"], step_id="inspect").error


def test_the_admin_editor_saves_new_step_types_and_refuses_what_publish_refuses(
    flow, admin_user, make_user, tenant
):
    body = {"caseTypeKey": flow.key, "name": "Drafted", "steps": [task_step("submit")]}
    workflow = Workflow.objects.get(pk=ok(flow.client.post("/workflows", body, format="json"), 201)["id"])
    url = f"/admin/workflows/workflow/{workflow.pk}/change/"
    client = admin_client(admin_user)
    assert 'name="steps"' in client.get(url).content.decode()
    steps = [
        task_step("submit"), task_step("review", **REVIEW),
        {"id": "cool", "name": "Cool off", "type": "timer", "after": "PT48H"},
        {"id": "docs", "name": "Documents", "type": "wait", "message": "documents"},
        {"id": "inspect", "name": "Inspect", "type": "case", "caseTypeKey": flow.key, "data": {"title": "x"}},
    ]  # fmt: skip
    saved = client.post(url, {"name": "Edited", "steps": json.dumps(steps)})
    assert saved.status_code == 302, saved.content.decode()[-2000:]
    workflow.refresh_from_db()
    assert workflow.name == "Edited" and [s["type"] for s in workflow.definition["steps"]][2:] == [
        "timer",
        "wait",
        "case",
    ]
    assert audit_actions(admin_user.tenant_id, f"workflows/{workflow.pk}")[-1] == "workflow:edited"

    forward = [
        task_step("submit"),
        task_step("review", outcomes=["ok", "redo"], routes={"redo": "pay"}),
        task_step("pay"),
    ]
    refused = client.post(url, {"name": "Broken", "steps": json.dumps(forward)})
    assert (
        refused.status_code == 200
        and "steps[1].routes.redo: step &#x27;pay&#x27; is not before this step" in refused.content.decode()
    )
    workflow.refresh_from_db()
    assert workflow.name == "Edited"  # nothing saved
    reader = make_user(tenant, permissions=["workflows:read"], is_staff=True)
    assert admin_client(reader).post(url, {"name": "x", "steps": "[]"}).status_code == 403
    ok(flow.client.post(f"/workflows/{workflow.pk}/publish"))
    assert client.post(url, {"name": "x", "steps": json.dumps(steps)}).status_code == 403  # published: frozen


def test_a_child_closed_by_someone_who_cannot_see_the_parent_still_completes_its_step(
    flow, api, make_user, tenant
):
    from tests.casemgmt.workflows.test_teams import add_member, make_team

    team = make_team(flow.client, "Fraud")
    reader = ["cases:read", "cases:update", "tasks:read"]
    member, outsider = make_user(tenant, permissions=reader), make_user(tenant, permissions=reader)
    add_member(flow.client, team, member)
    secret_key = f"fraud_{flow.key[-6:]}"
    body = {
        "key": secret_key,
        "displayName": "Fraud",
        "schema": {"type": "object"},
        "accessTeams": [team["id"]],
    }
    ok(flow.client.post("/case-types", body, format="json"), 201)
    steps = [{"id": "inspect", "name": "Inspect", "type": "case", "caseTypeKey": flow.key, "data": {"title": "x"}},
             task_step("settle")]  # fmt: skip
    draft = ok(
        flow.client.post(
            "/workflows", {"caseTypeKey": secret_key, "name": "S", "steps": steps}, format="json"
        ),
        201,
    )
    ok(flow.client.post(f"/workflows/{draft['id']}/publish"))
    parent = ok(
        flow.client.post("/cases", {"case_type_key": secret_key, "case_data": {}}, format="json"), 201
    )
    child_id = flow.steps(parent["id"])["inspect"]["childCaseId"]
    child = ok(api(outsider).get(f"/cases/{child_id}"))
    assert child["parentId"] is None  # the parent is hidden from the outsider
    assert ok(api(member).get(f"/cases/{child_id}"))["parentId"] == parent["id"]

    ok(api(outsider).post(f"/cases/{child_id}/close", {"outcome": "done"}, format="json"))
    assert flow.statuses(parent["id"]) == {"inspect": "completed", "settle": "active"}
    history_reader = ok(api(member).get(f"/cases/{parent['id']}"))
    assert history_reader["children"][0]["status"] == "closed"
