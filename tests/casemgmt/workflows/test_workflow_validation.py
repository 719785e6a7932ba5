"""Workflow definition checks through the HTTP API: step field types on every save and at publish,
and the bounds of workflow and step `slaHours`."""

from __future__ import annotations

import pytest

from casemgmt.workflows.models import Workflow
from tests.casemgmt.workflows.conftest import ok, task_step

pytestmark = pytest.mark.django_db


def fields_of(response) -> set[str]:
    assert response.status_code == 400, response.content
    return {e["field"] for e in response.json()["details"]["errors"]}


BAD_STEPS = [
    {"id": 7, "name": ["A"], "type": ["task"], "dependsOn": "b", "condition": 5, "formSchema": []},
    {"id": "b", "name": "B", "type": {"task": 1}, "promptTemplate": 3, "outcomes": "yes", "slaHours": "1"},
]
BAD_FIELDS = {
    "steps[0].id", "steps[0].name", "steps[0].type", "steps[0].dependsOn", "steps[0].condition",
    "steps[0].formSchema", "steps[1].type", "steps[1].promptTemplate", "steps[1].outcomes", "steps[1].slaHours",
}  # fmt: skip


def test_step_field_types_are_a_400_listing_every_problem(flow):
    body = {"caseTypeKey": flow.key, "name": "Flow", "steps": BAD_STEPS}
    assert fields_of(flow.client.post("/workflows", body, format="json")) == BAD_FIELDS
    created = ok(flow.client.post("/workflows", {**body, "steps": [task_step("a")]}, format="json"), 201)
    url = f"/workflows/{created['id']}"
    assert fields_of(flow.client.put(url, body, format="json")) == BAD_FIELDS
    # A draft stored with such steps (written before the save-time check) is a 400 at publish, not a 500.
    Workflow.objects.filter(id=created["id"]).update(definition={"steps": BAD_STEPS})
    assert fields_of(flow.client.post(f"{url}/publish")) == BAD_FIELDS
    assert ok(flow.client.get(url))["status"] == "draft"


@pytest.mark.parametrize("sla", [10**12, 87601, 0, 1.5, True])
def test_workflow_sla_hours_are_bounded(flow, sla):
    body = {"caseTypeKey": flow.key, "name": "Flow", "steps": [task_step("a")], "slaHours": sla}
    assert fields_of(flow.client.post("/workflows", body, format="json")) == {"slaHours"}


@pytest.mark.parametrize("sla", [10**12, 1e15, 87601, 0, 1.5])
def test_step_sla_hours_are_bounded_at_publish(flow, sla):
    body = {"caseTypeKey": flow.key, "name": "Flow", "steps": [task_step("a", slaHours=sla)]}
    created = ok(flow.client.post("/workflows", body, format="json"), 201)
    assert fields_of(flow.client.post(f"/workflows/{created['id']}/publish")) == {"steps[0].slaHours"}


def test_ten_years_is_accepted_and_cases_get_deadlines(flow):
    flow.workflow([task_step("a", slaHours=87600)], slaHours=87600)
    case = flow.case()
    assert ok(flow.client.get(f"/tasks/{case['id']}/a"))["dueAt"] is not None


def test_a_task_role_must_name_an_existing_role_of_the_tenant(flow, tenant, other_tenant):
    from casemgmt.accounts.models import Role

    Role.objects.create(tenant=other_tenant, name="adjuster", display_name="Adjuster", permissions=[])
    # "Case Worker" is the seeded role's display name; its name is case_worker. "adjuster" exists
    # only in another tenant.
    steps = [
        task_step("a", role="Case Worker"),
        task_step("b", role="case_worker"),
        task_step("c", role="adjuster"),
    ]
    created = ok(
        flow.client.post(
            "/workflows", {"caseTypeKey": flow.key, "name": "Flow", "steps": steps}, format="json"
        ),
        201,
    )
    response = flow.client.post(f"/workflows/{created['id']}/publish")
    assert fields_of(response) == {"steps[0].role", "steps[2].role"}
    assert "Case Worker" in response.json()["details"]["errors"][0]["error"]
    Role.objects.create(tenant=tenant, name="adjuster", display_name="Adjuster", permissions=[])
    fixed = [task_step("a", role="case_worker"), *steps[1:]]
    ok(
        flow.client.put(
            f"/workflows/{created['id']}",
            {"caseTypeKey": flow.key, "name": "Flow", "steps": fixed},
            format="json",
        )
    )
    assert ok(flow.client.post(f"/workflows/{created['id']}/publish"))["status"] == "published"
