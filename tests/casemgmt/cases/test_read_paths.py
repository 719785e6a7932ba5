"""`GET /cases/{id}` and `GET /cases` read rows in one statement on PostgreSQL (ids and timestamps
formatted by the database): what they answer is, field for field, the representation built from the
case's model (`case_out`, the path SQLite takes)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from casemgmt.accounts.models import User
from casemgmt.cases import selectors
from casemgmt.cases.apis import case_list_item_out, case_out
from casemgmt.cases.models import Case
from casemgmt.cases.services import case_close
from casemgmt.workflows.models import CaseStep, Workflow
from shared.api.time import iso

pytestmark = pytest.mark.django_db

# Sub-millisecond digits that rounding (rather than truncating, as the API does) would change.
AN_INSTANT = datetime(2026, 11, 26, 23, 59, 59, 999999, tzinfo=UTC)


@pytest.fixture
def flow(tenant, permit_type):
    return Workflow.objects.create(
        tenant=tenant,
        case_type_key="permit",
        name="Permit flow",
        version=3,
        status=Workflow.PUBLISHED,
        definition={"steps": [{"id": "review", "name": "Review", "type": "task"}], "outcomes": ["approved"]},
        is_default=True,
        sla_hours=10,
    )


def create(api, user, case_type, data: dict[str, Any]) -> dict[str, Any]:
    response = api(user).post("/cases", {"caseTypeId": str(case_type.id), "data": data}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def step_out(step: CaseStep) -> dict[str, Any]:
    out = {"id": step.step_id, "name": step.name, "type": step.type, "status": step.status}
    out["activatedAt"] = iso(step.activated_at)
    if step.completed_at is not None:
        out["completedAt"] = iso(step.completed_at)
    out["iteration"] = step.iteration
    if step.type == "timer" and step.fire_at is not None:
        out["fireAt"] = iso(step.fire_at)
    if step.message:
        out["message"] = step.message
    if step.child_case_id:
        out["childCaseId"] = str(step.child_case_id)
    if step.result is not None:
        out["result"] = step.result
    if step.outcome:
        out["outcome"] = step.outcome
    if step.completed_by_id:
        out["completedBy"] = str(step.completed_by_id)
    return out


def detail_from_model(case_id: str) -> dict[str, Any]:
    case = Case.objects.select_related("case_type", "workflow_version").get(id=case_id)
    body = case_out(case)
    workflow = case.workflow_version
    parent = CaseStep.objects.filter(child_case=case).values_list("case_id", flat=True).first()
    body["parentId"] = str(parent) if parent else None
    body["children"] = [
        {"id": str(s.child_case_id), "caseNumber": s.child_case.case_number, "status": s.child_case.status}
        for s in CaseStep.objects.filter(case=case, child_case__isnull=False).order_by(
            "child_case__created_at"
        )
    ]
    body["workflow"] = workflow and {
        "id": str(workflow.id),
        "version": workflow.version,
        "steps": [step_out(s) for s in CaseStep.objects.filter(case=case).order_by("position")],
        "history": [],  # no rework route taken
        "stepResults": {
            s.step_id: s.result for s in CaseStep.objects.filter(case=case, status=CaseStep.COMPLETED)
        },
    }
    return body


def add_steps(case_id: str, tenant) -> None:
    """The first step completed at an instant with sub-millisecond digits, a second one active."""
    CaseStep.objects.filter(case_id=case_id, step_id="review").update(
        status=CaseStep.COMPLETED,
        activated_at=AN_INSTANT - timedelta(hours=1),
        completed_at=AN_INSTANT,
        result={"approved": True, "note": "ünïcode ✓", "amounts": [1, 2.5]},
        outcome="approve",
        completed_by=User.objects.filter(tenant=tenant).first(),
    )
    CaseStep.objects.create(
        tenant=tenant, case_id=case_id, step_id="approve", name="Approve", type="task", position=1,
        status=CaseStep.ACTIVE, activated_at=AN_INSTANT,
    )  # fmt: skip


def test_a_case_with_a_workflow_reads_as_its_model_shows_it(api, admin_user, tenant, permit_type, flow):
    created = create(api, admin_user, permit_type, {"title": "Shed", "floors": 2, "notes": "ünïcode ✓"})
    add_steps(created["id"], tenant)
    Case.objects.filter(id=created["id"]).update(sla_deadline=AN_INSTANT)

    response = api(admin_user).get(f"/cases/{created['id']}")

    assert response.status_code == 200
    assert response.json() == detail_from_model(created["id"])
    steps = response.json()["workflow"]["steps"]
    assert steps[0]["completedAt"] == "2026-11-26T23:59:59.999Z" and "completedAt" not in steps[1]
    assert steps[0]["result"] == {"approved": True, "note": "ünïcode ✓", "amounts": [1, 2.5]}
    assert steps[0]["outcome"] == "approve" and "result" not in steps[1] and "outcome" not in steps[1]
    assert response.json()["workflow"]["stepResults"] == {"review": steps[0]["result"]}
    assert response.json()["slaDeadline"] == "2026-11-26T23:59:59.999Z"
    assert response["ETag"] == f'"{created["version"]}"'


def test_a_closed_case_without_a_workflow_reads_as_its_model_shows_it(api, admin_user, permit_type):
    created = create(api, admin_user, permit_type, {"title": "Fence"})
    case_close(user=admin_user, case=Case.objects.get(id=created["id"]), reason="done", outcome="granted")

    body = api(admin_user).get(f"/cases/{created['id']}").json()

    assert body == detail_from_model(created["id"])
    assert body["workflow"] is None and body["outcome"] == "granted" and body["closedAt"]


def test_list_items_read_as_their_models_show_them(api, admin_user, tenant, permit_type, flow):
    ids = [create(api, admin_user, permit_type, {"title": f"Case {n}", "n": n})["id"] for n in range(3)]
    add_steps(ids[1], tenant)

    body = api(admin_user).get("/cases?limit=2").json()

    newest = list(Case.objects.select_related("case_type").order_by("-created_at", "id")[:2])
    steps = selectors.current_steps([c.id for c in newest])
    assert body["data"] == [case_list_item_out(selectors.CaseRow.of(c), steps.get(c.id)) for c in newest]
    assert [item["currentStep"] for item in body["data"]] == ["Review", "Approve"]
    assert body["total"] == 3 and body["next"].endswith("/cases?limit=2&offset=2")


def test_list_totals_past_the_last_page_and_under_filters(api, admin_user, permit_type):
    ids = [create(api, admin_user, permit_type, {"title": f"Case {n}"})["id"] for n in range(3)]
    case_close(user=admin_user, case=Case.objects.get(id=ids[0]), outcome="granted")

    past = api(admin_user).get("/cases?offset=10").json()
    active = api(admin_user).get("/cases?status=active&limit=1").json()

    assert past == {"data": [], "total": 3, "next": None}
    assert active["total"] == 2 and [c["id"] for c in active["data"]] == [ids[2]]


def test_a_read_and_a_list_are_one_statement_between_the_tenant_switches(api, admin_user, permit_type, flow):
    case_id = create(api, admin_user, permit_type, {"title": "Barn"})["id"]
    client = api(admin_user)
    assert client.get("/cases").status_code == 200  # the principal is now verified and cached

    for path in (f"/cases/{case_id}", "/cases?limit=25"):
        with CaptureQueriesContext(connection) as captured:
            assert client.get(path).status_code == 200
        sql = [q["sql"] for q in captured.captured_queries]
        assert len(sql) == 3, sql
        assert sql[0].startswith("SELECT set_config('app.tenant_id'") and "cases_case" in sql[1]
        assert sql[2].startswith("SELECT set_config('role', 'none', false)")


def test_prepared_reads_answer_each_caller_in_their_own_tenant(api, admin_user, permit_type, other_tenant):
    """The read and the list are prepared once per connection and then reused: the tenant and team
    settings and the row-level policies must apply at each execution, never the first caller's.
    Both tenants' requests here run on the test's one connection, alternating, past the point where
    PostgreSQL switches a prepared statement to a generic plan (its sixth execution)."""
    mine = create(api, admin_user, permit_type, {"title": "Mine"})["id"]
    other_admin = User.objects.get(tenant=other_tenant, roles__name="admin")
    for _ in range(8):
        assert api(admin_user).get(f"/cases/{mine}").status_code == 200
        assert api(other_admin).get(f"/cases/{mine}").status_code == 404
        assert [c["id"] for c in api(admin_user).get("/cases?limit=25").json()["data"]] == [mine]
        assert api(other_admin).get("/cases?limit=25").json() == {"data": [], "total": 0, "next": None}
