"""Teams over HTTP: CRUD and members, `/auth/me`, candidate teams on task steps (claim, reassign,
inbox `team` and `candidate=me`) and release, each for owner / no permission / other tenant /
anonymous."""

from __future__ import annotations

import uuid

import pytest

from casemgmt.audit.models import AuditEvent
from tests.casemgmt.workflows.conftest import audit_actions, ok, task_step

pytestmark = pytest.mark.django_db

WORKER = ["tasks:read", "tasks:claim", "tasks:complete", "cases:read"]


def make_team(client, name=None, **extra):
    return ok(
        client.post("/teams", {"name": name or f"team-{uuid.uuid4().hex[:6]}", **extra}, format="json"), 201
    )


def add_member(client, team, user, lead=False):
    return ok(
        client.post(f"/teams/{team['id']}/members", {"userId": str(user.id), "lead": lead}, format="json"),
        201,
    )


def test_team_crud_members_and_audit(api, admin_user, make_user, tenant, other_tenant):
    admin = api(admin_user)
    team = make_team(admin, "Claims", description="First line")
    assert set(team) == {"id", "name", "description", "members", "createdAt"}
    assert team["name"] == "Claims" and team["description"] == "First line" and team["members"] == []

    clash = admin.post("/teams", {"name": "Claims"}, format="json")
    assert clash.status_code == 409 and clash.json()["code"] == "already_exists"

    worker = make_user(tenant, permissions=WORKER)
    added = add_member(admin, team, worker, lead=True)
    assert added["members"] == [{"userId": str(worker.id), "email": worker.email, "lead": True}]

    inactive = make_user(tenant, permissions=WORKER, is_active=False)
    foreign = make_user(other_tenant, permissions=WORKER)
    for user in (inactive, foreign):
        bad = admin.post(f"/teams/{team['id']}/members", {"userId": str(user.id)}, format="json")
        assert bad.status_code == 400 and bad.json()["code"] == "validation_error"

    listed = ok(admin.get("/teams?limit=10"))
    assert listed["total"] == 1 and listed["limit"] == 10 and listed["offset"] == 0
    assert listed["data"][0]["id"] == team["id"]
    assert ok(api(worker).get(f"/teams/{team['id']}"))["name"] == "Claims"  # tasks:read reads teams

    renamed = ok(admin.patch(f"/teams/{team['id']}", {"name": "Claims EU"}, format="json"))
    assert renamed["name"] == "Claims EU" and renamed["description"] == "First line"

    me = ok(api(worker).get("/auth/me"))
    assert me["id"] == str(worker.id)
    assert me["teams"] == [{"id": team["id"], "name": "Claims EU", "lead": True}]

    assert admin.delete(f"/teams/{team['id']}/members/{worker.id}").status_code == 204
    assert admin.delete(f"/teams/{team['id']}/members/{worker.id}").status_code == 404
    assert ok(api(worker).get("/auth/me"))["teams"] == []
    assert admin.delete(f"/teams/{team['id']}").status_code == 204
    assert admin.get(f"/teams/{team['id']}").status_code == 404
    assert audit_actions(tenant.id, f"teams/{team['id']}") == [
        "team:created",
        "team:member_added",
        "team:updated",
        "team:member_removed",
        "team:deleted",
    ]


def test_team_permissions_other_tenant_and_anonymous(api, admin_user, make_user, tenant, other_tenant):
    team = make_team(api(admin_user))
    nobody = api(make_user(tenant, permissions=["cases:read"]))
    worker = api(make_user(tenant, permissions=WORKER))
    for client in (nobody,):
        assert client.get("/teams").status_code == 403
        assert client.get(f"/teams/{team['id']}").status_code == 403
    for client in (nobody, worker):  # writes need admin:users
        assert client.post("/teams", {"name": "x"}, format="json").status_code == 403
        assert client.patch(f"/teams/{team['id']}", {"name": "x"}, format="json").status_code == 403
        assert client.delete(f"/teams/{team['id']}").status_code == 403
        assert client.post(f"/teams/{team['id']}/members", {"userId": str(uuid.uuid4())}).status_code == 403

    stranger = api(make_user(other_tenant, permissions=["admin:users", "tasks:read"]))
    assert stranger.get(f"/teams/{team['id']}").status_code == 404
    assert stranger.patch(f"/teams/{team['id']}", {"name": "x"}, format="json").status_code == 404
    assert stranger.delete(f"/teams/{team['id']}").status_code == 404
    assert ok(stranger.get("/teams"))["total"] == 0

    anonymous = api(None)
    for response in (
        anonymous.get("/teams"),
        anonymous.get(f"/teams/{team['id']}"),
        anonymous.post("/teams", {"name": "x"}, format="json"),
        anonymous.get("/auth/me"),
    ):
        assert response.status_code == 401


def test_task_step_team_restricts_claim_reassign_and_inbox(flow, api, make_user, tenant, other_tenant):
    team = make_team(flow.client, "Adjusters")
    member, outsider = make_user(tenant, permissions=WORKER), make_user(tenant, permissions=WORKER)
    add_member(flow.client, team, member)

    bad = flow.client.post(
        "/workflows",
        {"caseTypeKey": flow.key, "name": "Flow", "steps": [task_step("review", team="Nope")]},
        format="json",
    )
    rejected = flow.client.post(f"/workflows/{ok(bad, 201)['id']}/publish")
    assert rejected.status_code == 400 and "steps[0].team" in str(rejected.json())

    flow.workflow([task_step("review", team="Adjusters")])
    case = flow.case()
    task = ok(flow.client.get(f"/tasks/{case['id']}/review"))
    assert task["candidateTeam"] == {"id": team["id"], "name": "Adjusters"}

    assert ok(api(member).get("/tasks/inbox?candidate=me"))["total"] == 1
    assert ok(api(member).get(f"/tasks/inbox?team={team['id']}"))["total"] == 1
    assert ok(api(outsider).get("/tasks/inbox?candidate=me"))["total"] == 0
    assert ok(api(outsider).get("/tasks/inbox"))["total"] == 0  # not theirs to act on
    assert ok(flow.client.get(f"/tasks/inbox?team={uuid.uuid4()}"))["total"] == 0
    assert flow.client.get("/tasks/inbox?candidate=you").status_code == 400

    refused = api(outsider).post(f"/tasks/{case['id']}/review/claim")
    assert refused.status_code == 403 and refused.json()["code"] == "permission_denied"
    to_outsider = flow.client.post(
        f"/tasks/{case['id']}/review/reassign", {"assignTo": str(outsider.id)}, format="json"
    )
    assert to_outsider.status_code == 400 and to_outsider.json()["code"] == "validation_error"

    claimed = ok(api(member).post(f"/tasks/{case['id']}/review/claim"))
    assert claimed["assignedTo"] == str(member.id)
    assert ok(api(member).get("/tasks/inbox?candidate=me"))["total"] == 0  # held: nothing left to claim

    # A team named by an open task cannot be deleted.
    blocked = flow.client.delete(f"/teams/{team['id']}")
    assert blocked.status_code == 409 and blocked.json()["code"] == "invalid_state"
    stranger = api(make_user(other_tenant, permissions=WORKER))
    assert stranger.post(f"/tasks/{case['id']}/review/claim").status_code == 404


def test_release(flow, api, make_user, tenant, other_tenant):
    flow.workflow([task_step("review")])
    case = flow.case()
    url = f"/tasks/{case['id']}/review"
    holder, other = make_user(tenant, permissions=WORKER), make_user(tenant, permissions=WORKER)

    not_held = api(holder).post(f"{url}/release")
    assert not_held.status_code == 409 and not_held.json()["code"] == "invalid_state"

    ok(api(holder).post(f"{url}/claim"))
    assert api(other).post(f"{url}/release").status_code == 403  # neither holder nor tasks:assign
    assert api(make_user(other_tenant, permissions=["*"])).post(f"{url}/release").status_code == 404
    assert api(None).post(f"{url}/release").status_code == 401

    released = ok(api(holder).post(f"{url}/release"))
    assert released["status"] == "unclaimed" and released["assignedTo"] is None
    ok(api(other).post(f"{url}/claim"))
    assigner = make_user(tenant, permissions=[*WORKER, "tasks:assign"])
    assert ok(api(assigner).post(f"{url}/release"))["assignedTo"] is None
    events = AuditEvent.objects.filter(resource=f"cases/{case['id']}/tasks/review", action="task:released")
    assert [e.actor for e in events.order_by("sequence")] == [str(holder.id), str(assigner.id)]
