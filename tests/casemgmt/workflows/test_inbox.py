"""Human tasks through the HTTP API: a two-step workflow end to end (claim, draft, complete) and each endpoint."""

from __future__ import annotations

import uuid

import pytest

from casemgmt.accounts.models import User
from casemgmt.workflows.services import tasks_release_for_user
from tests.casemgmt.workflows.conftest import audit_actions, ok, task_step

pytestmark = pytest.mark.django_db

WORKER = ["tasks:read", "tasks:claim", "tasks:complete", "cases:read"]
TASK_FIELDS = {
    "caseId", "stepId", "stepName", "caseType", "caseNumber", "caseSummary", "status", "createdAt", "dueAt",
    "assignedTo", "role", "candidateTeam", "formSchema", "outcomes", "escalated", "escalatedAt", "escalationReason",
    "escalatedTo", "draft", "outcome", "completedAt", "completedBy",
}  # fmt: skip


def test_two_step_workflow_end_to_end(flow, api, make_user, tenant):
    alice, bob = make_user(tenant, permissions=WORKER), make_user(tenant, permissions=WORKER)
    flow.workflow([task_step("review", slaHours=24, outcomes=["approve", "reject"]), task_step("payout")])
    case = flow.case({"amount": 50, "title": "Broken window"})
    assert flow.statuses(case["id"]) == {"review": "active", "payout": "pending"}

    inbox = ok(api(alice).get("/tasks/inbox"))
    assert inbox["total"] == 1
    item = inbox["data"][0]
    assert item["caseId"] == case["id"] and item["stepId"] == "review" and item["stepName"] == "Review"
    assert item["status"] == "unclaimed" and item["assignedTo"] is None and item["caseType"] == flow.key
    assert item["formSchema"]["required"] == ["approved"]
    assert (
        item["createdAt"].endswith("Z") and item["dueAt"].endswith("Z") and item["dueAt"] > item["createdAt"]
    )
    assert item["caseSummary"]["caseNumber"] == case["caseNumber"]
    assert set(item) == TASK_FIELDS
    assert item["escalated"] is False and item["draft"] is None and item["outcomes"] == ["approve", "reject"]

    base = f"/tasks/{case['id']}/review"
    claimed = ok(api(alice).post(f"{base}/claim"))
    assert claimed["assignedTo"] == str(alice.id) and claimed["status"] == "claimed"
    assert claimed["caseData"] == {"amount": 50, "title": "Broken window"}
    assert set(claimed) == TASK_FIELDS | {"caseData", "data"} and claimed["data"] is None
    assert ok(api(alice).post(f"{base}/claim"))["assignedTo"] == str(alice.id)  # idempotent for the holder

    taken = api(bob).post(f"{base}/claim")
    assert taken.status_code == 409 and taken.json()["code"] == "already_claimed"
    assert (
        api(bob)
        .post(f"{base}/complete", {"data": {"approved": True}, "outcome": "approve"}, format="json")
        .json()["code"]
        == "already_claimed"
    )

    invalid = api(alice).post(
        f"{base}/complete", {"data": {"note": 5 * "toolong"}, "outcome": "maybe"}, format="json"
    )
    assert invalid.status_code == 400
    fields = {e["field"] for e in invalid.json()["details"]["errors"]}
    assert fields == {"data", "data.note", "outcome"}  # every problem listed

    done = ok(
        api(alice).post(f"{base}/complete", {"data": {"approved": True}, "outcome": "approve"}, format="json")
    )
    assert (
        done["status"] == "completed"
        and done["outcome"] == "approve"
        and done["completedBy"] == str(alice.id)
    )
    assert done["completedAt"].endswith("Z") and done["data"] == {"approved": True}
    steps = flow.steps(case["id"])
    assert steps["review"]["status"] == "completed" and "completedAt" in steps["review"]
    assert steps["payout"]["status"] == "active" and "completedAt" not in steps["payout"]

    again = api(alice).post(
        f"{base}/complete", {"data": {"approved": True}, "outcome": "approve"}, format="json"
    )
    assert again.status_code == 409 and again.json()["code"] == "already_completed"
    assert api(alice).post(f"{base}/claim").json()["code"] == "already_completed"
    assert [i["stepId"] for i in ok(api(bob).get("/tasks/inbox"))["data"]] == ["payout"]
    assert [i["stepId"] for i in ok(api(alice).get("/tasks/inbox?status=completed"))["data"]] == ["review"]
    assert audit_actions(tenant.id, f"cases/{case['id']}/tasks/") == ["task:claimed", "task:completed"]


def test_completing_an_unclaimed_task_makes_the_caller_assignee(flow, api, make_user, tenant):
    user = make_user(tenant, permissions=WORKER)
    flow.workflow([task_step("review")])
    case = flow.case()
    done = ok(
        api(user).post(f"/tasks/{case['id']}/review/complete", {"data": {"approved": False}}, format="json")
    )
    assert done["assignedTo"] == str(user.id) and done["outcome"] is None


def test_task_endpoints_check_authentication_permission_and_tenant(
    flow, api, make_user, tenant, other_tenant
):
    flow.workflow([task_step("review")])
    case = flow.case()
    base = f"/tasks/{case['id']}/review"
    reader = make_user(tenant, permissions=["tasks:read"])
    outsider = make_user(other_tenant, roles=["admin"])
    calls = [
        ("get", "/tasks/inbox", None, "tasks:read"),
        ("get", base, None, "tasks:read"),
        ("post", f"{base}/claim", None, "tasks:claim"),
        ("post", f"{base}/complete", {"data": {"approved": True}}, "tasks:complete"),
        ("post", f"{base}/draft", {"data": {}}, "tasks:complete"),
        ("post", f"{base}/reassign", {"assignTo": str(reader.id)}, "tasks:complete"),
        ("post", f"{base}/escalate", {"reason": "stuck"}, "tasks:complete"),
    ]
    for method, url, body, permission in calls:
        assert getattr(api(None), method)(url, body, format="json").status_code == 401, url
        lacking = make_user(
            tenant, permissions=["cases:read"] if permission != "tasks:read" else ["cases:read"]
        )
        assert getattr(api(lacking), method)(url, body, format="json").status_code == 403, url
        if url != "/tasks/inbox":
            missing = getattr(api(outsider), method)(url, body, format="json")
            assert missing.status_code == 404 and missing.json()["code"] == "not_found", url
    assert ok(api(outsider).get("/tasks/inbox"))["total"] == 0
    assert api(reader).get(f"/tasks/{case['id']}/nosuchstep").status_code == 404
    assert api(reader).get(f"/tasks/{uuid.uuid4()}/review").status_code == 404


def test_inbox_filters_sorting_and_paging(flow, api, make_user, tenant):
    user = make_user(tenant, permissions=WORKER)
    flow.workflow([task_step("review", slaHours=1)])
    cases = [flow.case() for _ in range(3)]
    ok(api(user).post(f"/tasks/{cases[1]['id']}/review/claim"))
    client = api(user)
    assert ok(client.get("/tasks/inbox"))["total"] == 3
    assert [t["caseId"] for t in ok(client.get("/tasks/inbox?status=claimed"))["data"]] == [cases[1]["id"]]
    assert ok(client.get("/tasks/inbox?status=unclaimed"))["total"] == 2
    assert ok(client.get(f"/tasks/inbox?caseId={cases[2]['id']}"))["data"][0]["caseId"] == cases[2]["id"]
    page = ok(client.get("/tasks/inbox?limit=2&sortBy=dueDate"))
    assert len(page["data"]) == 2 and page["total"] == 3 and page["next"].startswith("http")
    newest_first = [c["id"] for c in reversed(cases)]
    assert [t["caseId"] for t in ok(client.get("/tasks/inbox?sortBy=createdAt"))["data"]] == newest_first
    assert [t["caseId"] for t in ok(client.get("/tasks/inbox"))["data"]] == newest_first
    assert ok(client.get("/tasks/inbox?sortBy=caseType&offset=2"))["data"][0]["stepId"] == "review"
    assert ok(client.get("/tasks/inbox?dueBefore=2000-01-01T00:00:00Z"))["total"] == 0
    assert ok(client.get("/tasks/inbox?dueAfter=2000-01-01T00:00:00Z"))["total"] == 3
    for bad in (
        "status=open",
        "sortBy=name",
        "limit=101",
        "limit=0",
        "offset=-1",
        "dueBefore=soon",
        "caseId=x",
    ):
        response = client.get(f"/tasks/inbox?{bad}")
        assert response.status_code == 400 and response.json()["code"] == "validation_error", bad


def test_role_restricted_task_is_hidden_and_unclaimable_without_the_role(flow, api, make_user, tenant):
    from casemgmt.accounts.models import Role

    Role.objects.create(tenant=tenant, name="adjuster", display_name="Adjuster", permissions=WORKER)
    adjuster = make_user(tenant, roles=["adjuster"])
    other = make_user(tenant, permissions=WORKER)
    flow.workflow([task_step("review", role="adjuster")])
    case = flow.case()
    assert ok(api(other).get("/tasks/inbox"))["total"] == 0
    refused = api(other).post(f"/tasks/{case['id']}/review/claim")
    assert refused.status_code == 403 and refused.json()["code"] == "permission_denied"
    assert ok(api(adjuster).get("/tasks/inbox"))["data"][0]["role"] == "adjuster"
    assert ok(api(adjuster).post(f"/tasks/{case['id']}/review/claim"))["assignedTo"] == str(adjuster.id)


def test_draft_is_saved_and_shown_on_the_task(flow, api, make_user, tenant):
    user, other = make_user(tenant, permissions=WORKER), make_user(tenant, permissions=WORKER)
    flow.workflow([task_step("review")])
    case = flow.case()
    base = f"/tasks/{case['id']}/review"
    draft = ok(api(user).post(f"{base}/draft", {"data": {"note": "half"}}, format="json"))
    assert (
        draft["data"] == {"note": "half"}
        and draft["savedAt"].endswith("Z")
        and set(draft) == {"data", "savedAt"}
    )
    assert ok(api(user).get(base))["draft"] == draft
    ok(api(user).post(f"{base}/claim"))
    assert api(other).post(f"{base}/draft", {"data": {}}, format="json").json()["code"] == "already_claimed"
    assert api(user).post(f"{base}/draft", {"data": "text"}, format="json").status_code == 400
    assert api(user).post(f"{base}/draft", {}, format="json").status_code == 400


def test_reassign_to_an_active_user_of_the_tenant(flow, api, make_user, tenant, other_tenant):
    user, target = make_user(tenant, permissions=WORKER), make_user(tenant, permissions=WORKER)
    outsider = make_user(other_tenant, permissions=WORKER)
    disabled = make_user(tenant, permissions=WORKER)
    User.objects.filter(pk=disabled.pk).update(is_active=False)
    flow.workflow([task_step("review")])
    case = flow.case()
    base = f"/tasks/{case['id']}/reassign"
    base = f"/tasks/{case['id']}/review/reassign"
    for bad in ({"assignTo": str(outsider.id)}, {"assignTo": str(disabled.id)}, {"assignTo": "nope"}, {}):
        response = api(user).post(base, bad, format="json")
        assert response.status_code == 400 and response.json()["details"]["field"] == "assignTo", bad
    moved = ok(api(user).post(base, {"assignTo": str(target.id)}, format="json"))
    assert moved["assignedTo"] == str(target.id) and moved["status"] == "claimed"
    assert "task:reassigned" in audit_actions(tenant.id, f"cases/{case['id']}/tasks/")


def test_escalate_marks_the_task_and_optionally_hands_it_over(flow, api, make_user, tenant):
    user, lead = make_user(tenant, permissions=WORKER), make_user(tenant, permissions=WORKER)
    flow.workflow([task_step("review"), task_step("second", dependsOn=[])])
    case = flow.case()
    assert api(user).post(f"/tasks/{case['id']}/review/escalate", {}, format="json").status_code == 400
    bad = api(user).post(
        f"/tasks/{case['id']}/review/escalate",
        {"reason": "x", "escalateTo": str(uuid.uuid4())},
        format="json",
    )
    assert bad.status_code == 400 and bad.json()["details"]["field"] == "escalateTo"
    task = ok(
        api(user).post(f"/tasks/{case['id']}/review/escalate", {"reason": "customer angry"}, format="json")
    )
    assert (
        task["escalated"] is True
        and task["escalationReason"] == "customer angry"
        and task["escalatedAt"].endswith("Z")
    )
    assert task["escalatedTo"] is None and task["assignedTo"] is None
    assert (
        api(user).post(f"/tasks/{case['id']}/review/escalate", {"reason": "again"}, format="json").status_code
        == 409
    )
    handed = ok(
        api(user).post(
            f"/tasks/{case['id']}/second/escalate", {"reason": "r", "escalateTo": str(lead.id)}, format="json"
        )
    )
    assert handed["escalatedTo"] == str(lead.id) and handed["assignedTo"] == str(lead.id)
    assert audit_actions(tenant.id, f"cases/{case['id']}/tasks/") == ["task:escalated", "task:escalated"]


def test_assign_to_at_activation_assigns_and_audits(flow, api, make_user, tenant):
    user = make_user(tenant, permissions=WORKER)
    flow.workflow([task_step("review", assignTo=str(user.id))])
    case = flow.case()
    item = ok(api(user).get("/tasks/inbox"))["data"][0]
    assert item["assignedTo"] == str(user.id) and item["status"] == "claimed"
    assert audit_actions(tenant.id, f"cases/{case['id']}/tasks/") == ["task:assigned"]


def test_closing_the_case_halts_its_workflow(flow, api, make_user, tenant):
    user = make_user(tenant, permissions=WORKER)
    flow.workflow([task_step("review"), task_step("payout")])
    case = flow.case()
    ok(api(user).post(f"/tasks/{case['id']}/review/claim"))
    ok(flow.client.post(f"/cases/{case['id']}/cancel", {"reason": "duplicate"}, format="json"))
    assert flow.statuses(case["id"]) == {"review": "skipped", "payout": "skipped"}
    assert ok(api(user).get("/tasks/inbox"))["total"] == 0
    late = api(user).post(f"/tasks/{case['id']}/review/complete", {"data": {"approved": True}}, format="json")
    assert late.status_code == 409 and late.json()["code"] == "invalid_state"


def test_auto_close_closes_the_case_after_the_last_step(flow, api, make_user, tenant):
    user = make_user(tenant, permissions=WORKER)
    flow.workflow([task_step("review")], autoClose=True)
    case = flow.case()
    ok(api(user).post(f"/tasks/{case['id']}/review/complete", {"data": {"approved": True}}, format="json"))
    assert ok(flow.client.get(f"/cases/{case['id']}"))["status"] == "closed"
    assert "case:closed" in audit_actions(tenant.id, f"cases/{case['id']}")


def test_without_auto_close_the_case_stays_active(flow, api, make_user, tenant):
    user = make_user(tenant, permissions=WORKER)
    flow.workflow([task_step("review")])
    case = flow.case()
    ok(api(user).post(f"/tasks/{case['id']}/review/complete", {"data": {"approved": True}}, format="json"))
    assert ok(flow.client.get(f"/cases/{case['id']}"))["status"] == "active"


def test_disabling_a_principal_releases_or_reassigns_its_tasks(flow, api, make_user, tenant, admin_user):
    leaving, backup = make_user(tenant, permissions=WORKER), make_user(tenant, permissions=WORKER)
    flow.workflow([task_step("review"), task_step("audit", dependsOn=[], reassignTo=str(backup.id))])
    case = flow.case()
    ok(api(leaving).post(f"/tasks/{case['id']}/review/claim"))
    ok(api(leaving).post(f"/tasks/{case['id']}/audit/claim"))
    assert tasks_release_for_user(user=leaving, actor=admin_user) == 2
    assert ok(flow.client.get(f"/tasks/{case['id']}/review"))["assignedTo"] is None
    assert ok(flow.client.get(f"/tasks/{case['id']}/audit"))["assignedTo"] == str(backup.id)
    assert audit_actions(tenant.id, f"cases/{case['id']}/tasks/")[-2:] == [
        "task:reassigned",
        "task:reassigned",
    ]


def test_disabling_through_the_admin_api_releases_the_tasks(flow, api, make_user, tenant):
    leaving = make_user(tenant, permissions=WORKER)
    flow.workflow([task_step("review")])
    case = flow.case()
    ok(api(leaving).post(f"/tasks/{case['id']}/review/claim"))
    response = flow.client.post(f"/admin/principals/{leaving.id}/disable")
    assert response.status_code in (200, 204), response.content
    task = ok(flow.client.get(f"/tasks/{case['id']}/review"))
    assert task["assignedTo"] is None and task["status"] == "unclaimed"
