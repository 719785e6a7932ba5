"""The seeded Case Worker role (no tasks:read) works its inbox: it reads the tasks it may act on."""

from __future__ import annotations

import pytest

from casemgmt.accounts.models import Role
from tests.casemgmt.workflows.conftest import ok, task_step

pytestmark = pytest.mark.django_db


def test_case_worker_reads_only_the_tasks_it_may_act_on(flow, api, make_user, tenant, admin_user):
    worker = make_user(tenant, roles=["case_worker"])
    colleague = make_user(tenant, roles=["case_worker"])
    assert "tasks:read" not in worker.get_permission_strings()
    Role.objects.create(tenant=tenant, name="adjuster", display_name="Adjuster", permissions=["tasks:claim"])
    flow.workflow([task_step("review")])
    open_case, taken_case = flow.case(), flow.case()
    flow.workflow([task_step("check", role="adjuster")])
    role_case = flow.case()
    ok(api(colleague).post(f"/tasks/{taken_case['id']}/review/claim"))

    inbox = ok(api(worker).get("/tasks/inbox"))
    assert [(t["caseId"], t["stepId"]) for t in inbox["data"]] == [(open_case["id"], "review")]
    assert inbox["total"] == 1

    own = f"/tasks/{open_case['id']}/review"
    assert ok(api(worker).get(own))["caseData"] == {"amount": 10}
    for foreign in (f"/tasks/{taken_case['id']}/review", f"/tasks/{role_case['id']}/check"):
        refused = api(worker).get(foreign)
        assert refused.status_code == 403 and refused.json()["code"] == "permission_denied", foreign
        assert ok(api(admin_user).get(foreign))["stepId"] in ("review", "check")  # tasks:read reads all

    ok(api(worker).post(f"{own}/claim"))
    ok(api(worker).post(f"{own}/complete", {"data": {"approved": True}}, format="json"))
    assert ok(api(worker).get(own))["status"] == "completed"
    completed = ok(api(worker).get("/tasks/inbox?status=completed"))["data"]
    assert [(t["caseId"], t["completedBy"]) for t in completed] == [(open_case["id"], str(worker.id))]


def test_principals_without_any_task_permission_cannot_read_tasks(flow, api, make_user, tenant):
    viewer = make_user(tenant, roles=["viewer"])
    flow.workflow([task_step("review")])
    case = flow.case()
    for url in ("/tasks/inbox", f"/tasks/{case['id']}/review", f"/tasks/{case['id']}/nosuchstep"):
        refused = api(viewer).get(url)
        assert refused.status_code == 403 and refused.json()["code"] == "permission_denied", url
    completer = make_user(tenant, permissions=["tasks:complete"])
    assert ok(api(completer).get("/tasks/inbox"))["total"] == 1
