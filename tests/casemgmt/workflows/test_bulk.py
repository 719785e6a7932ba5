"""Bulk task and case actions over HTTP: by list and by filter, per-item checks, audit and failures."""

from __future__ import annotations

import uuid

import pytest

from casemgmt.accounts.models import Team
from casemgmt.audit.models import AuditEvent
from casemgmt.cases.models import Case
from casemgmt.workflows.models import CaseStep
from tests.casemgmt.workflows.conftest import ok, task_step
from tests.casemgmt.workflows.test_teams import WORKER, add_member, make_team

pytestmark = pytest.mark.django_db

# The seeded Case Worker's task permissions: reads only the tasks it may act on.
CASE_WORKER = ["tasks:claim", "tasks:complete", "cases:read", "cases:update"]


def copies_of(case_id: str, count: int, *, team_id=None) -> list[tuple[str, str]]:
    """`count` more cases like `case_id`, each with its open `review` task, in two INSERTs."""
    case = Case.objects.get(pk=case_id)
    step = CaseStep.objects.get(case=case, step_id="review")
    cases = [
        Case(
            tenant_id=case.tenant_id,
            case_type_id=case.case_type_id,
            case_number=f"BULK-{uuid.uuid4().hex[:12]}",
            status=Case.ACTIVE,
            data=case.data,
            workflow_version_id=case.workflow_version_id,
            created_by_id=case.created_by_id,
        )
        for _ in range(count)
    ]
    Case.objects.bulk_create(cases)
    CaseStep.objects.bulk_create(
        CaseStep(
            tenant_id=step.tenant_id,
            case=copy,
            step_id=step.step_id,
            name=step.name,
            type=step.type,
            position=step.position,
            status=CaseStep.ACTIVE,
            activated_at=step.activated_at,
            is_task=True,
            candidate_team_id=team_id or step.candidate_team_id,
        )
        for copy in cases
    )
    return [(str(c.id), "review") for c in cases]


def test_bulk_reassign_of_1000_tasks_with_10_out_of_reach(flow, api, make_user, tenant):
    mine, theirs = make_team(flow.client), make_team(flow.client)
    caller, target = make_user(tenant, permissions=CASE_WORKER), make_user(tenant, permissions=CASE_WORKER)
    for user in (caller, target):
        add_member(flow.client, mine, user)
    flow.workflow([task_step("review", team=mine["id"])])
    first = flow.case()
    refs = [(first["id"], "review"), *copies_of(first["id"], 989)]
    refs += copies_of(first["id"], 10, team_id=Team.objects.get(pk=theirs["id"]).pk)  # not the caller's team

    body = {
        "action": "reassign",
        "tasks": [{"caseId": c, "stepId": s} for c, s in refs],
        "assignTo": str(target.id),
    }
    result = ok(api(caller).post("/tasks/bulk", body, format="json"))
    assert result["matched"] == 1000 and result["succeeded"] == 990
    assert len(result["failed"]) == 10
    assert {f["code"] for f in result["failed"]} == {"permission_denied"}
    assert {f["caseId"] for f in result["failed"]} == {c for c, _ in refs[-10:]}
    assert AuditEvent.objects.filter(tenant_id=tenant.id, action="task:reassigned").count() == 990
    assert CaseStep.objects.filter(tenant_id=tenant.id, assigned_to=target).count() == 990


def test_bulk_tasks_by_filter_and_the_request_rules(flow, api, make_user, tenant, other_tenant):
    alice, bob = make_user(tenant, permissions=WORKER), make_user(tenant, permissions=WORKER)
    flow.workflow([task_step("review")])
    cases = [flow.case() for _ in range(3)]
    for case in cases[:2]:
        ok(api(alice).post(f"/tasks/{case['id']}/review/claim"))

    released = ok(
        api(alice).post("/tasks/bulk", {"action": "release", "filter": {"status": "claimed"}}, format="json")
    )
    assert released == {"matched": 2, "succeeded": 2, "failed": []}
    assert AuditEvent.objects.filter(tenant_id=tenant.id, action="task:released").count() == 2

    # Release of tasks not held: each reported, none done.
    again = ok(api(bob).post("/tasks/bulk", {"action": "release", "filter": {}}, format="json"))
    assert again["matched"] == 3 and again["succeeded"] == 0
    assert {f["code"] for f in again["failed"]} == {"invalid_state"}

    foreign = flow.case()
    escalate = {
        "action": "escalate",
        "reason": "Backlog",
        "tasks": [
            {"caseId": cases[0]["id"], "stepId": "review"},
            {"caseId": str(uuid.uuid4()), "stepId": "review"},
        ],
    }
    escalated = ok(api(bob).post("/tasks/bulk", escalate, format="json"))
    assert escalated["succeeded"] == 1 and escalated["failed"][0]["code"] == "not_found"
    assert escalated["failed"][0]["stepId"] == "review"

    stranger = api(make_user(other_tenant, permissions=["*"]))
    outside = ok(stranger.post("/tasks/bulk", {**escalate, "tasks": escalate["tasks"][:1]}, format="json"))
    assert outside["succeeded"] == 0 and outside["failed"][0]["code"] == "not_found"

    refs = [{"caseId": foreign["id"], "stepId": "review"}]
    for bad in (
        {"action": "release"},  # neither list nor filter
        {"action": "release", "tasks": refs, "filter": {}},  # both
        {"action": "release", "tasks": refs * 1001},
        {"action": "reassign", "tasks": refs},  # no assignTo
        {"action": "escalate", "tasks": refs},  # no reason
        {"action": "archive", "tasks": refs},
        {"action": "release", "filter": {"status": "nope"}},
    ):
        response = api(bob).post("/tasks/bulk", bad, format="json")
        assert response.status_code == 400 and response.json()["code"] == "validation_error", bad
    nobody = api(make_user(tenant, permissions=["cases:read"]))
    assert nobody.post("/tasks/bulk", {**escalate}, format="json").status_code == 403
    assert api(None).post("/tasks/bulk", escalate, format="json").status_code == 401


def test_bulk_cases_close_and_cancel(flow, api, make_user, tenant, other_tenant):
    flow.workflow([task_step("review")])
    cases = [flow.case() for _ in range(3)]
    alien_flow_case = uuid.uuid4()
    closer = api(make_user(tenant, permissions=["cases:read", "cases:update"]))
    result = ok(
        closer.post(
            "/cases/bulk",
            {"action": "close", "caseIds": [cases[0]["id"], str(alien_flow_case)], "outcome": "done"},
            format="json",
        )
    )
    assert result["matched"] == 2 and result["succeeded"] == 1
    assert result["failed"] == [
        {"caseId": str(alien_flow_case), "code": "not_found", "message": "Case not found."}
    ]

    cancelled = ok(
        closer.post("/cases/bulk", {"action": "cancel", "filter": {"status": "active"}}, format="json")
    )
    assert cancelled == {"matched": 2, "succeeded": 2, "failed": []}
    assert AuditEvent.objects.filter(tenant_id=tenant.id, action="case:cancelled").count() == 2
    assert AuditEvent.objects.filter(tenant_id=tenant.id, action="case:closed").count() == 1
    twice = ok(closer.post("/cases/bulk", {"action": "cancel", "caseIds": [cases[1]["id"]]}, format="json"))
    assert twice["succeeded"] == 0 and twice["failed"][0]["code"] == "invalid_state"

    stranger = api(make_user(other_tenant, permissions=["*"]))
    assert (
        ok(stranger.post("/cases/bulk", {"action": "cancel", "caseIds": [cases[2]["id"]]}, format="json"))[
            "failed"
        ][0]["code"]
        == "not_found"
    )
    reader = api(make_user(tenant, permissions=["cases:read"]))
    assert reader.post("/cases/bulk", {"action": "cancel", "caseIds": []}, format="json").status_code == 403
    assert (
        api(None).post("/cases/bulk", {"action": "cancel", "caseIds": []}, format="json").status_code == 401
    )
    too_many = closer.post(
        "/cases/bulk", {"action": "cancel", "caseIds": [str(uuid.uuid4())] * 1001}, format="json"
    )
    assert too_many.status_code == 400
