"""Cases bound to a published workflow version: default binding, SLA fallback, outcomes, halting.

The workflow rows are written directly (publishing is the workflows app's API); starting and halting
run the real engine.
"""

from datetime import datetime, timedelta

import pytest

from casemgmt.workflows.models import CaseStep, Workflow

pytestmark = pytest.mark.django_db

DEFINITION = {
    "steps": [{"id": "review", "name": "Review", "type": "task"}],
    "outcomes": ["approved", "rejected"],
}


@pytest.fixture
def published(tenant, permit_type):
    return Workflow.objects.create(
        tenant=tenant,
        case_type_key="permit",
        name="Permit flow",
        version=1,
        status=Workflow.PUBLISHED,
        definition=DEFINITION,
        is_default=True,
        sla_hours=10,
    )


def parse(ts):
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def new_case(api, user, permit_type, **extra):
    response = api(user).post(
        "/cases", {"caseTypeId": str(permit_type.id), "data": {"title": "x"}, **extra}, format="json"
    )
    assert response.status_code == 201, response.json()
    return response.json()


def test_default_published_workflow_is_bound_and_its_sla_used(api, admin_user, permit_type, published):
    body = new_case(api, admin_user, permit_type)
    assert body["workflowVersionId"] == str(published.id)
    assert parse(body["slaDeadline"]) - parse(body["createdAt"]) == timedelta(hours=10)
    detail = api(admin_user).get(f"/cases/{body['id']}").json()
    assert detail["workflow"]["id"] == str(published.id) and detail["workflow"]["version"] == 1
    assert [s["id"] for s in detail["workflow"]["steps"]] == ["review"]
    item = api(admin_user).get("/cases").json()["data"][0]
    assert item["currentStep"] == "Review"


def test_explicit_version_must_be_published(api, admin_user, tenant, permit_type, published):
    published.is_default = False
    published.save()
    assert new_case(api, admin_user, permit_type)["workflowVersionId"] is None
    assert new_case(api, admin_user, permit_type, workflowVersionId=str(published.id))[
        "workflowVersionId"
    ] == str(published.id)
    draft = Workflow.objects.create(
        tenant=tenant, case_type_key="permit", name="d", version=2, definition=DEFINITION
    )
    response = api(admin_user).post(
        "/cases",
        {"caseTypeId": str(permit_type.id), "data": {}, "workflowVersionId": str(draft.id)},
        format="json",
    )
    assert response.status_code == 400


def test_assigned_to_filter_uses_active_tasks(api, admin_user, permit_type, published, make_user, tenant):
    body = new_case(api, admin_user, permit_type)
    new_case(api, admin_user, permit_type)
    holder = make_user(tenant, permissions=["cases:read"])
    CaseStep.objects.filter(case_id=body["id"], step_id="review").update(assigned_to=holder)
    listing = api(holder).get(f"/cases?assignedTo={holder.id}").json()
    assert [i["id"] for i in listing["data"]] == [body["id"]]
    assert [i["id"] for i in api(holder).get("/cases?assignedTo=me").json()["data"]] == [body["id"]]


def test_outcome_must_be_one_of_the_workflow_outcomes_and_close_halts(
    api, admin_user, permit_type, published
):
    body = new_case(api, admin_user, permit_type)
    bad = api(admin_user).post(f"/cases/{body['id']}/close", {"outcome": "maybe"}, format="json")
    assert bad.status_code == 400 and bad.json()["details"]["field"] == "outcome"
    good = api(admin_user).post(f"/cases/{body['id']}/close", {"outcome": "approved"}, format="json")
    assert good.status_code == 200 and good.json()["outcome"] == "approved"
    assert not CaseStep.objects.filter(
        case_id=body["id"], status__in=[CaseStep.ACTIVE, CaseStep.PENDING]
    ).exists()


def test_cancel_halts_the_workflow(api, admin_user, permit_type, published):
    body = new_case(api, admin_user, permit_type)
    assert api(admin_user).post(f"/cases/{body['id']}/cancel", {}, format="json").status_code == 200
    assert not CaseStep.objects.filter(
        case_id=body["id"], status__in=[CaseStep.ACTIVE, CaseStep.PENDING]
    ).exists()
