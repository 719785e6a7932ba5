"""Review findings on definitions and human tasks: step field types, SLA bounds, which steps are
tasks, and role-restricted reassignment. Everything through the HTTP API."""

from __future__ import annotations

import pytest

from casemgmt.workflows.models import Workflow
from tests.casemgmt.workflows.conftest import ok, task_step

pytestmark = pytest.mark.django_db


def fields_of(response) -> set[str]:
    assert response.status_code == 400, response.content
    return {e["field"] for e in response.json()["details"]["errors"]}


BAD_STEPS = [
    {"id": 7, "name": ["A"], "type": ["task"], "dependsOn": "b", "condition": 5, "formSchema": []},
    {"id": "b", "name": "B", "type": {"task": 1}, "promptTemplate": 3, "outcomes": "yes", "slaHours": "1"},
]
BAD_FIELDS = {
    "steps[0].id", "steps[0].name", "steps[0].type", "steps[0].dependsOn", "steps[0].condition",
    "steps[0].formSchema", "steps[1].type", "steps[1].promptTemplate", "steps[1].outcomes", "steps[1].slaHours",
}  # fmt: skip


def test_step_field_types_are_a_400_listing_every_problem(flow):
    body = {"caseTypeKey": flow.key, "name": "Flow", "steps": BAD_STEPS}
    assert fields_of(flow.client.post("/workflows", body, format="json")) == BAD_FIELDS
    created = ok(flow.client.post("/workflows", {**body, "steps": [task_step("a")]}, format="json"), 201)
    url = f"/workflows/{created['id']}"
    assert fields_of(flow.client.put(url, body, format="json")) == BAD_FIELDS
    # A draft stored with such steps (written before the save-time check) is a 400 at publish, not a 500.
    Workflow.objects.filter(id=created["id"]).update(definition={"steps": BAD_STEPS})
    assert fields_of(flow.client.post(f"{url}/publish")) == BAD_FIELDS
    assert ok(flow.client.get(url))["status"] == "draft"


@pytest.mark.parametrize("sla", [10**12, 87601, 0, 1.5, True])
def test_workflow_sla_hours_are_bounded(flow, sla):
    body = {"caseTypeKey": flow.key, "name": "Flow", "steps": [task_step("a")], "slaHours": sla}
    assert fields_of(flow.client.post("/workflows", body, format="json")) == {"slaHours"}


@pytest.mark.parametrize("sla", [10**12, 1e15, 87601, 0, 1.5])
def test_step_sla_hours_are_bounded_at_publish(flow, sla):
    body = {"caseTypeKey": flow.key, "name": "Flow", "steps": [task_step("a", slaHours=sla)]}
    created = ok(flow.client.post("/workflows", body, format="json"), 201)
    assert fields_of(flow.client.post(f"/workflows/{created['id']}/publish")) == {"steps[0].slaHours"}


def test_ten_years_is_accepted_and_cases_get_deadlines(flow):
    flow.workflow([task_step("a", slaHours=87600)], slaHours=87600)
    case = flow.case()
    assert ok(flow.client.get(f"/tasks/{case['id']}/a"))["dueAt"] is not None


def test_only_active_and_completed_task_steps_are_tasks(flow, api, make_user, tenant):
    worker = make_user(tenant, permissions=["tasks:read", "tasks:claim", "tasks:complete", "cases:read"])
    flow.workflow(
        [
            task_step("a"),
            task_step("never", dependsOn=["a"], condition="gt case_data.amount 100"),
            task_step("later", dependsOn=["a"]),
        ]
    )
    case = flow.case({"amount": 1})
    base = f"/tasks/{case['id']}"
    assert api(worker).get(f"{base}/later").status_code == 404  # pending: never activated
    claim = api(worker).post(f"{base}/later/claim")
    assert claim.status_code == 409 and claim.json()["code"] == "invalid_state"
    ok(api(worker).post(f"{base}/a/complete", {"data": {"approved": True}}, format="json"))
    assert flow.statuses(case["id"]) == {"a": "completed", "never": "skipped", "later": "active"}
    assert api(worker).get(f"{base}/never").status_code == 404  # skipped by its condition
    complete = api(worker).post(f"{base}/never/complete", {"data": {"approved": True}}, format="json")
    assert complete.status_code == 409 and complete.json()["code"] == "invalid_state"
    assert ok(api(worker).get(f"{base}/a"))["status"] == "completed"  # history stays readable
    ok(api(worker).post(f"{base}/later/claim"))
    ok(flow.client.post(f"/cases/{case['id']}/close", {}, format="json"))  # halts: later is skipped
    assert api(worker).get(f"{base}/later").status_code == 404  # not shown as "claimed"
    inbox = ok(api(worker).get("/tasks/inbox", {"caseId": case["id"]}))
    assert inbox["total"] == 0
    assert ok(api(worker).get("/tasks/inbox", {"caseId": case["id"], "status": "completed"}))["total"] == 1


def test_a_role_restricted_task_goes_only_to_holders_of_the_role(flow, api, make_user, tenant):
    lead = make_user(tenant, permissions=["tasks:read", "tasks:complete", "tasks:claim"])
    approver = make_user(tenant, permissions=["tasks:read"])
    approver.roles.add(*lead.roles.all())
    role = lead.roles.first().name
    outsider = make_user(tenant, permissions=["tasks:read"])
    flow.workflow([task_step("a", role=role)])
    case = flow.case()
    base = f"/tasks/{case['id']}/a"
    refused = api(lead).post(f"{base}/reassign", {"assignTo": str(outsider.id)}, format="json")
    assert refused.status_code == 400 and refused.json()["details"]["field"] == "assignTo"
    assert role in refused.json()["message"]
    refused = api(lead).post(
        f"{base}/escalate", {"reason": "r", "escalateTo": str(outsider.id)}, format="json"
    )
    assert refused.status_code == 400 and refused.json()["details"]["field"] == "escalateTo"
    assert ok(api(lead).get(base))["assignedTo"] is None and ok(api(lead).get(base))["escalated"] is False
    moved = ok(api(lead).post(f"{base}/reassign", {"assignTo": str(approver.id)}, format="json"))
    assert moved["assignedTo"] == str(approver.id)


def test_seeded_case_worker_reads_the_inbox(flow, api, make_user, tenant):
    worker = make_user(tenant, roles=["case_worker"])
    assert ok(api(worker).get("/tasks/inbox"))["total"] == 0
