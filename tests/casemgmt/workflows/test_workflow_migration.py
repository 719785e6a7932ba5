"""`POST /workflows/{id}/migrate`: live cases move to another published version, each whole or not
at all, one case's failure reported while the others move."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from casemgmt.audit.models import AuditEvent
from casemgmt.cases.models import Case, CaseType
from casemgmt.workflows.models import CaseStep, Workflow
from shared.api.time import now_ms
from tests.casemgmt.workflows.conftest import Flow, ok, task_step

pytestmark = pytest.mark.django_db

V1 = [task_step("a"), task_step("b")]
V2 = [task_step("a2"), task_step("c", dependsOn=["a2"])]


def live_cases(flow: Flow, workflow_id: str, *, count: int, on_b: int) -> list[str]:
    """`count` active cases on the workflow, written in bulk (as many cases would have been made one
    by one): `a` active, except the last `on_b`, which completed `a` and wait at `b`."""
    workflow = Workflow.objects.get(pk=workflow_id)
    case_type = CaseType.objects.get(tenant_id=flow.admin.tenant_id, key=flow.key)
    now = now_ms()
    cases = [
        Case(id=uuid.uuid4(), tenant_id=workflow.tenant_id, case_type=case_type, case_number=f"MIG-{i:06d}",
             display_name=f"Case {i}", data={"amount": i}, workflow_version=workflow, created_at=now + timedelta(microseconds=i),
             created_by=flow.admin, sla_deadline=now + timedelta(days=1))
        for i in range(count)
    ]  # fmt: skip
    Case.objects.bulk_create(cases)
    steps = []
    for index, case in enumerate(cases):
        at_b = index >= count - on_b
        steps += [
            CaseStep(tenant_id=case.tenant_id, case=case, step_id="a", name="A", type="task", position=0, is_task=True,
                     status="completed" if at_b else "active", activated_at=now, completed_at=now if at_b else None,
                     result={"approved": True} if at_b else None),
            CaseStep(tenant_id=case.tenant_id, case=case, step_id="b", name="B", type="task", position=1, is_task=True,
                     status="active" if at_b else "pending", activated_at=now if at_b else None),
        ]  # fmt: skip
    CaseStep.objects.bulk_create(steps)
    return [str(case.id) for case in cases]


def test_500_cases_migrate_and_3_on_an_unmapped_step_are_reported_whole(flow):
    v1 = flow.workflow(V1)
    ids = live_cases(flow, v1["id"], count=500, on_b=3)
    v2 = flow.workflow(V2)
    body = {"fromVersion": v1["version"], "stepMapping": {"a": "a2"}}

    result = ok(flow.client.post(f"/workflows/{v2['id']}/migrate", body, format="json"))

    assert result["migrated"] == 497
    assert sorted(f["caseId"] for f in result["failed"]) == sorted(ids[-3:])
    assert {f["code"] for f in result["failed"]} == {"unmapped_step"}
    assert "'b'" in result["failed"][0]["message"]
    moved = ok(flow.client.get(f"/cases/{ids[0]}"))
    assert moved["workflowVersionId"] == v2["id"]
    assert [(s["id"], s["status"]) for s in moved["workflow"]["steps"]] == [
        ("a2", "active"),
        ("c", "pending"),
    ]
    assert ok(flow.client.get(f"/tasks/{ids[0]}/a2"))["status"] == "unclaimed"  # the same task, renamed
    assert Case.objects.filter(workflow_version_id=v2["id"]).count() == 497
    for case_id in ids[-3:]:  # nothing half-moved: the refused cases are as they were
        kept = ok(flow.client.get(f"/cases/{case_id}"))
        assert kept["workflowVersionId"] == v1["id"]
        assert [(s["id"], s["status"]) for s in kept["workflow"]["steps"]] == [
            ("a", "completed"),
            ("b", "active"),
        ]
    migrated = AuditEvent.objects.filter(tenant_id=flow.admin.tenant_id, action="case:migrated")
    assert (
        migrated.count() == 497
        and not migrated.filter(resource__in=[f"cases/{i}" for i in ids[-3:]]).exists()
    )
    event = migrated.get(resource=f"cases/{ids[0]}")
    assert event.changes["version"] == {"before": v1["version"], "after": v2["version"]}


def test_completed_steps_keep_their_results_and_new_steps_activate(flow):
    v1 = flow.workflow(V1)
    [case_id] = live_cases(flow, v1["id"], count=1, on_b=1)
    v2 = flow.workflow([task_step("a"), task_step("b2"), task_step("d", dependsOn=["a"])])
    body = {"fromVersion": v1["version"], "stepMapping": {"b": "b2"}, "caseIds": [case_id, str(uuid.uuid4())]}
    result = ok(flow.client.post(f"/workflows/{v2['id']}/migrate", body, format="json"))
    assert result["migrated"] == 1 and [f["code"] for f in result["failed"]] == ["not_found"]
    assert flow.statuses(case_id) == {"a": "completed", "b2": "active", "d": "active"}
    assert CaseStep.objects.get(case_id=case_id, step_id="a").result == {"approved": True}


def test_migrate_refuses_bad_requests(flow):
    v1 = flow.workflow(V1)
    v2 = flow.workflow(V2)
    url = f"/workflows/{v2['id']}/migrate"
    for body, field in [({"fromVersion": v2["version"], "stepMapping": {}}, "fromVersion"),
                        ({"fromVersion": 99, "stepMapping": {}}, "fromVersion"),
                        ({"fromVersion": v1["version"], "stepMapping": {"a": "nope"}}, "stepMapping.a"),
                        ({"stepMapping": {}}, "fromVersion")]:  # fmt: skip
        response = flow.client.post(url, body, format="json")
        assert response.status_code == 400 and response.json()["details"]["field"] == field, response.content
    draft = ok(
        flow.client.post("/workflows", {"caseTypeKey": flow.key, "name": "D", "steps": V2}, format="json"),
        201,
    )
    refused = flow.client.post(f"/workflows/{draft['id']}/migrate", {"fromVersion": 1}, format="json")
    assert refused.status_code == 409 and refused.json()["code"] == "invalid_state"


def test_migrate_permissions_and_tenancy(flow, api, make_user, tenant, other_tenant):
    v1 = flow.workflow(V1)
    v2 = flow.workflow(V2)
    url, body = f"/workflows/{v2['id']}/migrate", {"fromVersion": v1["version"], "stepMapping": {"a": "a2"}}
    assert api(None).post(url, body, format="json").status_code == 401
    publisher = make_user(tenant, permissions=["workflows:read", "workflows:write", "workflows:publish"])
    assert api(publisher).post(url, body, format="json").status_code == 403  # workflows:* is required
    assert api(make_user(other_tenant, roles=["admin"])).post(url, body, format="json").status_code == 404
    designer = make_user(tenant, roles=["workflow_designer"])  # holds workflows:*
    assert ok(api(designer).post(url, body, format="json")) == {"migrated": 0, "failed": []}
