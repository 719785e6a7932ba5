"""Races against real PostgreSQL with real threads: claims and the SLA escalation job."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection

from casemgmt.audit.models import AuditEvent
from casemgmt.workflows.models import CaseStep
from casemgmt.workflows.services import tasks_escalate_overdue
from casemgmt.workflows.services.control import steps_due_fire
from casemgmt.workflows.tasks import human_tasks_sweep
from shared.api.time import now_ms
from tests.casemgmt.workflows.conftest import ok, task_step

pytestmark = pytest.mark.django_db(transaction=True)

WORKER = ["tasks:read", "tasks:claim", "tasks:complete", "cases:read"]


def run_together(*calls):
    """Runs each call in its own thread (own DB connection), released at the same moment."""
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def runner(index, call):
        try:
            barrier.wait(timeout=10)
            results[index] = call()
        finally:
            connection.close()

    threads = [threading.Thread(target=runner, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


def test_concurrent_claims_exactly_one_wins(flow, api, make_user, tenant):
    flow.workflow([task_step("review")])
    users = [make_user(tenant, permissions=WORKER) for _ in range(2)]
    for _ in range(3):  # a few rounds to give the race a chance
        case = flow.case()
        clients = [api(user) for user in users]
        url = f"/tasks/{case['id']}/review/claim"
        responses = run_together(*[lambda c=c, u=url: c.post(u) for c in clients])
        codes = sorted(r.status_code for r in responses)
        assert codes == [200, 409], [r.content for r in responses]
        winner = next(u for u, r in zip(users, responses, strict=True) if r.status_code == 200)
        assert ok(flow.client.get(f"/tasks/{case['id']}/review"))["assignedTo"] == str(winner.id)
        claims = AuditEvent.objects.filter(resource=f"cases/{case['id']}/tasks/review", action="task:claimed")
        assert claims.count() == 1


def test_concurrent_completions_of_a_diamond_activate_the_join_once(flow, api, make_user, tenant):
    flow.workflow(
        [
            task_step("left", dependsOn=[]),
            task_step("right", dependsOn=[]),
            task_step("join", dependsOn=["left", "right"]),
        ]
    )
    user_a, user_b = make_user(tenant, permissions=WORKER), make_user(tenant, permissions=WORKER)
    case = flow.case()
    body = {"data": {"approved": True}}
    responses = run_together(
        lambda: api(user_a).post(f"/tasks/{case['id']}/left/complete", body, format="json"),
        lambda: api(user_b).post(f"/tasks/{case['id']}/right/complete", body, format="json"),
    )
    assert [r.status_code for r in responses] == [200, 200]
    assert flow.statuses(case["id"])["join"] == "active"


def test_sla_job_escalates_once_when_run_twice_or_concurrently(flow, api, tenant):
    flow.workflow([task_step("review", slaHours=1)])
    cases = [flow.case() for _ in range(3)]
    assert tasks_escalate_overdue() == 0  # nothing is overdue yet
    later = now_ms() + timedelta(hours=2)
    results = run_together(
        lambda: tasks_escalate_overdue(now=later), lambda: tasks_escalate_overdue(now=later)
    )
    assert sum(results) == 3
    assert tasks_escalate_overdue(now=later) == 0  # a second run finds nothing
    escalated = CaseStep.objects.filter(case_id__in=[c["id"] for c in cases], escalated=True)
    assert escalated.count() == 3
    assert AuditEvent.objects.filter(tenant_id=tenant.id, action="task:escalated").count() == 3
    task = ok(flow.client.get(f"/tasks/{cases[0]['id']}/review"))
    assert task["escalated"] is True and task["escalationReason"].startswith("SLA breached")
    assert human_tasks_sweep() == 0  # the beat task itself: not overdue by the real clock


def test_concurrent_publishes_leave_exactly_one_default(flow):
    drafts = [
        ok(
            flow.client.post(
                "/workflows",
                {"caseTypeKey": flow.key, "name": f"W{i}", "steps": [task_step("a")]},
                format="json",
            ),
            201,
        )
        for i in range(2)
    ]
    responses = run_together(*[lambda d=d: flow.client.post(f"/workflows/{d['id']}/publish") for d in drafts])
    assert [r.status_code for r in responses] == [200, 200]
    listing = ok(flow.client.get(f"/workflows?caseTypeKey={flow.key}"))["data"]
    assert sum(1 for w in listing if w["isDefault"]) == 1


def test_due_timers_fire_once_when_swept_twice_or_concurrently(flow, tenant):
    flow.workflow([{"id": "cool", "name": "Cool off", "type": "timer", "after": "PT1H"}, task_step("next")])
    cases = [flow.case()["id"] for _ in range(3)]
    assert steps_due_fire() == 0  # not due yet
    later = now_ms() + timedelta(hours=2)
    results = run_together(lambda: steps_due_fire(now=later), lambda: steps_due_fire(now=later))
    assert sum(results) == 3
    assert steps_due_fire(now=later) == 0  # a second run finds nothing
    fired = AuditEvent.objects.filter(tenant_id=tenant.id, action="timer:fired")
    assert fired.count() == 3
    assert CaseStep.objects.filter(case_id__in=cases, step_id="next", status="active").count() == 3
