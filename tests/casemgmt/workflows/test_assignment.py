"""Out of office over HTTP (set by the user or an admin, delegation at activation and reassign,
while absent and not after) and the team assignment strategies."""

from __future__ import annotations

import uuid
from collections import Counter
from datetime import timedelta

import pytest

from casemgmt.audit.models import AuditEvent
from shared.api.time import iso, now_ms
from tests.casemgmt.workflows.conftest import ok, task_step
from tests.casemgmt.workflows.test_concurrency import run_together
from tests.casemgmt.workflows.test_teams import WORKER, add_member, make_team

pytestmark = pytest.mark.django_db


def absence(delegate=None, *, starts_in=-1, ends_in=1):
    now = now_ms()
    body = {"from": iso(now + timedelta(days=starts_in)), "until": iso(now + timedelta(days=ends_in))}
    if delegate is not None:
        body["delegateTo"] = str(delegate.id)
    return body


def test_out_of_office_by_the_user_and_by_an_admin(api, admin_user, make_user, tenant, other_tenant):
    alice, bob = make_user(tenant, permissions=WORKER), make_user(tenant, permissions=WORKER)
    me = api(alice)
    set_ = ok(me.put("/users/me/out-of-office", absence(bob), format="json"))
    assert set(set_) == {"from", "until", "delegateTo", "active"}
    assert set_["delegateTo"] == str(bob.id) and set_["active"] is True
    assert ok(me.get("/auth/me"))["outOfOffice"]["active"] is True
    assert ok(me.get(f"/users/{alice.id}"))["outOfOffice"]["delegateTo"] == str(bob.id)

    for bad in (
        absence(starts_in=1, ends_in=0),  # until before from
        absence(alice),  # oneself
        absence(make_user(other_tenant, permissions=WORKER)),  # another tenant's user
        absence(make_user(tenant, permissions=WORKER, is_active=False)),
        {"until": iso(now_ms())},
    ):
        response = me.put("/users/me/out-of-office", bad, format="json")
        assert response.status_code == 400 and response.json()["code"] == "validation_error", bad

    later = ok(me.put("/users/me/out-of-office", absence(starts_in=2, ends_in=3), format="json"))
    assert later["active"] is False and later["delegateTo"] is None
    assert me.delete("/users/me/out-of-office").status_code == 204
    assert ok(me.get(f"/users/{alice.id}"))["outOfOffice"] is None

    admin = api(admin_user)
    assert ok(admin.put(f"/users/{bob.id}/out-of-office", absence(), format="json"))["active"] is True
    assert ok(admin.get(f"/users/{bob.id}"))["outOfOffice"]["active"] is True
    assert me.put(f"/users/{bob.id}/out-of-office", absence(), format="json").status_code == 403
    assert me.get(f"/users/{bob.id}").status_code == 403  # others' records need admin:users
    assert admin.delete(f"/users/{bob.id}/out-of-office").status_code == 204
    stranger = api(make_user(other_tenant, permissions=["*"]))
    assert stranger.put(f"/users/{bob.id}/out-of-office", absence(), format="json").status_code == 404
    assert stranger.get(f"/users/{bob.id}").status_code == 404
    assert api(None).put("/users/me/out-of-office", absence(), format="json").status_code == 401
    assert api(None).delete(f"/users/{bob.id}/out-of-office").status_code == 401


def test_delegation_while_absent_and_not_after(flow, api, make_user, tenant):
    alice, bob, carol = (make_user(tenant, permissions=WORKER) for _ in range(3))
    flow.workflow([task_step("review", assignTo=str(alice.id))])
    ok(api(alice).put("/users/me/out-of-office", absence(bob), format="json"))

    case = flow.case()
    task = ok(flow.client.get(f"/tasks/{case['id']}/review"))
    assert task["assignedTo"] == str(bob.id)
    delegated = AuditEvent.objects.get(resource=f"cases/{case['id']}/tasks/review", action="task:delegated")
    assert delegated.changes["from"] == str(alice.id) and delegated.changes["to"] == str(bob.id)

    # Reassign to the absent user: to the delegate again.
    ok(flow.client.post(f"/tasks/{case['id']}/review/reassign", {"assignTo": str(carol.id)}, format="json"))
    again = ok(
        flow.client.post(f"/tasks/{case['id']}/review/reassign", {"assignTo": str(alice.id)}, format="json")
    )
    assert again["assignedTo"] == str(bob.id)

    # Absent with no delegate: the task stays unassigned.
    ok(api(alice).put("/users/me/out-of-office", absence(), format="json"))
    assert ok(flow.client.get(f"/tasks/{flow.case()['id']}/review"))["assignedTo"] is None

    # After the absence ended: assignments reach the user again.
    ok(api(alice).put("/users/me/out-of-office", absence(bob, starts_in=-3, ends_in=-1), format="json"))
    back = flow.case()
    assert ok(flow.client.get(f"/tasks/{back['id']}/review"))["assignedTo"] == str(alice.id)
    assert not AuditEvent.objects.filter(resource=f"cases/{back['id']}/tasks/review", action="task:delegated")


def test_round_robin_skips_absent_members_and_least_loaded_balances(flow, api, make_user, tenant):
    team = make_team(flow.client)
    members = [make_user(tenant, permissions=WORKER) for _ in range(3)]
    for member in members:
        add_member(flow.client, team, member)
    flow.workflow([task_step("review", team=team["id"], assignment="round_robin")])
    first = [ok(flow.client.get(f"/tasks/{flow.case()['id']}/review"))["assignedTo"] for _ in range(4)]
    ids = [str(m.id) for m in members]
    assert first == [*ids, ids[0]]

    ok(api(members[1]).put("/users/me/out-of-office", absence(), format="json"))
    skipping = [ok(flow.client.get(f"/tasks/{flow.case()['id']}/review"))["assignedTo"] for _ in range(2)]
    assert skipping == [ids[2], ids[0]]
    assigned = AuditEvent.objects.filter(tenant_id=tenant.id, action="task:assigned")
    assert {e.changes.get("strategy") for e in assigned} == {"round_robin"}

    bad = flow.client.post(
        "/workflows",
        {"caseTypeKey": flow.key, "name": "F", "steps": [task_step("review", assignment="round_robin")]},
        format="json",
    )
    refused = flow.client.post(f"/workflows/{ok(bad, 201)['id']}/publish")
    assert refused.status_code == 400 and "steps[0].assignment" in str(refused.json())

    # least_loaded: member 0 holds 3 open tasks, member 2 holds 2, member 1 (back) holds 1.
    assert api(members[1]).delete("/users/me/out-of-office").status_code == 204
    flow.workflow([task_step("check", team=team["id"], assignment="least_loaded")])
    picks = [ok(flow.client.get(f"/tasks/{flow.case()['id']}/check"))["assignedTo"] for _ in range(3)]
    assert picks[0] == ids[1]
    assert Counter(picks[1:]) == Counter({ids[1]: 1, ids[2]: 1})


def test_round_robin_unknown_strategy_is_refused(flow):
    team = make_team(flow.client)
    draft = flow.client.post(
        "/workflows",
        {
            "caseTypeKey": flow.key,
            "name": "F",
            "steps": [task_step("review", team=team["name"], assignment=f"random-{uuid.uuid4().hex[:4]}")],
        },
        format="json",
    )
    refused = flow.client.post(f"/workflows/{ok(draft, 201)['id']}/publish")
    assert refused.status_code == 400 and "round_robin" in str(refused.json())


@pytest.mark.django_db(transaction=True)
def test_round_robin_under_concurrent_activation(flow, api, make_user, tenant):
    """20 tasks activated at once (20 threads, each its own PostgreSQL connection) over 4 members:
    each member gets 5 and no task is assigned twice."""
    team = make_team(flow.client)
    members = [make_user(tenant, permissions=WORKER) for _ in range(4)]
    for member in members:
        add_member(flow.client, team, member)
    flow.workflow([task_step("review", team=team["id"], assignment="round_robin")])
    body = {"case_type_key": flow.key, "case_data": {"amount": 1}}
    responses = run_together(
        *[lambda: api(flow.admin).post("/cases", body, format="json") for _ in range(20)]
    )
    assert [r.status_code for r in responses] == [201] * 20
    assigned = AuditEvent.objects.filter(tenant_id=tenant.id, action="task:assigned")
    assert assigned.count() == 20
    assert len({e.resource for e in assigned}) == 20  # no task assigned twice
    per_member = Counter(e.changes["assignedTo"] for e in assigned)
    assert per_member == Counter({str(m.id): 5 for m in members})
