"""Which workflow steps are human tasks, and who may hold them, through the HTTP API: only active
and completed task steps are tasks; a role-restricted task goes only to holders of the role; the
seeded Case Worker role can read its inbox."""

from __future__ import annotations

import pytest

from tests.casemgmt.workflows.conftest import ok, task_step

pytestmark = pytest.mark.django_db


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
