"""Every list of the case service whose order is not chosen by the caller returns newest first, with
ties broken by id (descending), so pages never overlap or skip an item."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.utils import timezone

from casemgmt.accounts.models import Role, User
from casemgmt.cases.models import CaseType
from casemgmt.tenancy.models import DEFAULT_TERMINOLOGY, Theme
from casemgmt.workflows.models import Workflow
from tests.casemgmt.workflows.conftest import Flow, ok, task_step

pytestmark = pytest.mark.django_db

SCHEMA = {"type": "object"}


def items(response) -> list[dict[str, Any]]:
    body = ok(response)
    return body["data"] if isinstance(body, dict) else body


@pytest.fixture
def admin(api, admin_user):
    return api(admin_user)


def test_case_types_newest_first(admin):
    for key in ("alpha_older", "zulu_newer"):  # alphabetical order is the opposite of newest first
        ok(admin.post("/case-types", {"key": key, "displayName": key, "schema": SCHEMA}, format="json"), 201)
    assert [t["key"] for t in items(admin.get("/case-types"))][:2] == ["zulu_newer", "alpha_older"]


def test_cases_newest_first(api, admin_user):
    flow = Flow(api, admin_user)
    older, newer = flow.case(), flow.case()
    assert [c["id"] for c in items(flow.client.get("/cases"))][:2] == [newer["id"], older["id"]]


def test_search_hits_of_equal_relevance_newest_first(api, admin_user):
    flow = Flow(api, admin_user)
    older, newer = flow.case({"title": "hailstorm"}), flow.case({"title": "hailstorm"})
    hits = items(flow.client.get("/cases/search?q=hailstorm"))
    assert hits[0]["relevance"] == hits[1]["relevance"]
    assert [h["id"] for h in hits] == [newer["id"], older["id"]]


def test_case_events_newest_first(api, admin_user):
    flow = Flow(api, admin_user)
    case = flow.case()
    ok(flow.client.patch(f"/cases/{case['id']}/data", {"data": {"amount": 2}}, format="json"))
    actions = [e["action"] for e in items(flow.client.get(f"/cases/{case['id']}/events"))]
    assert actions == ["case:updated", "case:created"]


def test_audit_and_activity_newest_first(admin):
    ok(admin.put("/tenant/branding", {"organizationName": "Older"}, format="json"))
    labels = {key: f"Renamed {key}" for key in DEFAULT_TERMINOLOGY}
    ok(admin.put("/tenant/terminology", labels, format="json"))
    newest = ["tenant:terminology_changed", "tenant:branding_changed"]
    assert [e["action"] for e in items(admin.get("/audit"))][:2] == newest
    assert [e["action"] for e in items(admin.get("/activity"))][:2] == newest


def test_principals_newest_first(admin):
    for name in ("Older", "Newer"):
        body = {
            "email": f"{name.lower()}-{uuid.uuid4().hex[:6]}@example.test",
            "displayName": name,
            "roles": [],
        }
        ok(admin.post("/admin/principals", body, format="json"), 201)
    assert [p["displayName"] for p in items(admin.get("/admin/principals"))][:2] == ["Newer", "Older"]


def test_roles_newest_first(admin):
    for name in ("older", "newer"):
        ok(
            admin.post("/admin/roles", {"name": name, "displayName": name, "permissions": []}, format="json"),
            201,
        )
    assert [r["name"] for r in items(admin.get("/admin/roles"))][:2] == ["newer", "older"]


def test_themes_newest_first(admin):
    for name in ("Older", "Newer"):
        ok(admin.post("/tenant/themes", {"name": name, "cssVariables": {}}, format="json"), 201)
    assert [t["name"] for t in items(admin.get("/tenant/themes"))][:2] == ["Newer", "Older"]


def test_workflows_newest_first(admin):
    ids = []
    for key in ("alpha_older", "zulu_newer"):  # alphabetical order is the opposite of newest first
        ok(admin.post("/case-types", {"key": key, "displayName": key, "schema": SCHEMA}, format="json"), 201)
        body = {"caseTypeKey": key, "name": key, "steps": [task_step("review")]}
        ids.append(ok(admin.post("/workflows", body, format="json"), 201)["id"])
    assert [w["id"] for w in items(admin.get("/workflows"))][:2] == ids[::-1]


def test_inbox_newest_first(api, admin_user):
    flow = Flow(api, admin_user)
    flow.workflow([task_step("review")])
    older, newer = flow.case(), flow.case()
    assert [t["caseId"] for t in items(flow.client.get("/tasks/inbox"))] == [newer["id"], older["id"]]


def test_prompt_templates_newest_first(admin):
    body = {"description": "d", "template": "t", "model": "m", "temperature": 0.1, "maxTokens": 10}
    for name in ("alpha_older", "zulu_newer"):  # alphabetical order is the opposite of newest first
        ok(admin.post("/prompt-templates", {"name": name, **body}, format="json"), 201)
    # A new version does not make a template newer: the list is ordered by when each was created.
    ok(admin.put("/prompt-templates/alpha_older", {**body, "template": "v2"}, format="json"))
    assert [t["name"] for t in items(admin.get("/prompt-templates"))] == ["zulu_newer", "alpha_older"]


def _roles(tenant, admin):
    for name in ("tie_a", "tie_b"):
        ok(
            admin.post("/admin/roles", {"name": name, "displayName": name, "permissions": []}, format="json"),
            201,
        )
    return Role.objects.filter(tenant=tenant, name__startswith="tie_"), "/admin/roles"


def _themes(tenant, admin):
    for name in ("tie_a", "tie_b"):
        ok(admin.post("/tenant/themes", {"name": name, "cssVariables": {}}, format="json"), 201)
    return Theme.objects.filter(tenant=tenant, name__startswith="tie_"), "/tenant/themes"


def _case_types(tenant, admin):
    for key in ("tie_a", "tie_b"):
        ok(admin.post("/case-types", {"key": key, "displayName": key, "schema": SCHEMA}, format="json"), 201)
    return CaseType.objects.filter(tenant=tenant, key__startswith="tie_"), "/case-types"


def _principals(tenant, admin):
    for name in ("tie_a", "tie_b"):
        body = {"email": f"{name}@example.test", "displayName": name, "roles": []}
        ok(admin.post("/admin/principals", body, format="json"), 201)
    return User.objects.filter(tenant=tenant, email__startswith="tie_"), "/admin/principals"


def _workflows(tenant, admin):
    key = "tie_flow"
    ok(admin.post("/case-types", {"key": key, "displayName": key, "schema": SCHEMA}, format="json"), 201)
    for name in ("tie_a", "tie_b"):
        body = {"caseTypeKey": key, "name": name, "steps": [task_step("x")]}
        ok(admin.post("/workflows", body, format="json"), 201)
    return Workflow.objects.filter(tenant=tenant, name__startswith="tie_"), "/workflows"


@pytest.mark.parametrize("make", [_roles, _themes, _case_types, _principals, _workflows])
def test_items_created_at_the_same_instant_are_ordered_by_id(tenant, admin, make):
    rows, url = make(tenant, admin)
    rows.update(created_at=timezone.now() + timezone.timedelta(days=1))  # the two newest, tied
    expected = sorted((str(pk) for pk in rows.values_list("pk", flat=True)), reverse=True)
    assert [item["id"] for item in items(admin.get(url))][:2] == expected
