"""Every new case has an slaDeadline: the case type's slaHours win, else the bound workflow's, else the
tenant's default SLA hours (PUT /tenant/settings), else the service default (CASE_DEFAULT_SLA_HOURS)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from casemgmt.audit.models import AuditEvent
from casemgmt.cases.services import case_type_create
from casemgmt.workflows.models import Workflow

pytestmark = pytest.mark.django_db


def parse(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def sla_of(client, case_type) -> timedelta:
    response = client.post("/cases", {"caseTypeId": str(case_type.id), "data": {}}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    return parse(body["slaDeadline"]) - parse(body["createdAt"])


def publish(tenant, key: str, sla_hours: int | None) -> Workflow:
    return Workflow.objects.create(
        tenant=tenant,
        case_type_key=key,
        name="Flow",
        version=1,
        status=Workflow.PUBLISHED,
        definition={"steps": [{"id": "review", "name": "Review", "type": "task"}]},
        is_default=True,
        sla_hours=sla_hours,
    )


def test_case_type_wins_then_workflow_then_tenant_default_then_service_default(
    api, admin_user, tenant, settings
):
    settings.CASE_DEFAULT_SLA_HOURS = 7
    client = api(admin_user)
    schema = {"type": "object"}
    typed = case_type_create(user=admin_user, key="typed", display_name="T", schema=schema, sla_hours=5)
    flowed = case_type_create(user=admin_user, key="flowed", display_name="F", schema=schema)
    bare = case_type_create(user=admin_user, key="bare", display_name="B", schema=schema)
    unset_flow = case_type_create(user=admin_user, key="unset_flow", display_name="U", schema=schema)
    publish(tenant, "typed", 10)
    publish(tenant, "flowed", 10)
    publish(tenant, "unset_flow", None)

    assert sla_of(client, typed) == timedelta(hours=5)
    assert sla_of(client, flowed) == timedelta(hours=10)
    assert sla_of(client, bare) == timedelta(hours=7)  # no workflow, no tenant default
    assert sla_of(client, unset_flow) == timedelta(hours=7)  # a workflow without slaHours

    assert client.put("/tenant/settings", {"defaultSlaHours": 30}, format="json").status_code == 200
    assert sla_of(client, bare) == timedelta(hours=30)
    assert sla_of(client, unset_flow) == timedelta(hours=30)
    assert sla_of(client, flowed) == timedelta(hours=10) and sla_of(client, typed) == timedelta(hours=5)

    assert client.put("/tenant/settings", {"defaultSlaHours": None}, format="json").status_code == 200
    assert sla_of(client, bare) == timedelta(hours=7)


def test_service_default_is_72_hours(api, admin_user):
    from django.conf import settings

    assert settings.CASE_DEFAULT_SLA_HOURS == 72
    bare = case_type_create(user=admin_user, key="bare", display_name="B", schema={"type": "object"})
    assert sla_of(api(admin_user), bare) == timedelta(hours=72)


def test_tenant_settings_read_by_any_member_written_by_tenant_admins(
    api, admin_user, make_user, tenant, other_tenant
):
    viewer = make_user(tenant, roles=["viewer"])
    assert api(viewer).get("/tenant/settings").json() == {
        "defaultSlaHours": None,
        "serviceDefaultSlaHours": 72,
    }
    refused = api(viewer).put("/tenant/settings", {"defaultSlaHours": 24}, format="json")
    assert refused.status_code == 403 and refused.json()["code"] == "permission_denied"
    assert api(None).get("/tenant/settings").status_code == 401
    assert api(None).put("/tenant/settings", {"defaultSlaHours": 24}, format="json").status_code == 401

    changed = api(admin_user).put("/tenant/settings", {"defaultSlaHours": 24}, format="json")
    assert changed.status_code == 200
    assert changed.json() == {"defaultSlaHours": 24, "serviceDefaultSlaHours": 72}
    assert api(viewer).get("/tenant/settings").json()["defaultSlaHours"] == 24
    [event] = AuditEvent.objects.filter(tenant=tenant, action="tenant:settings_changed")
    assert event.resource == f"tenants/{tenant.id}/settings"
    assert event.changes == {"defaultSlaHours": {"from": None, "to": 24}}
    # Same value again: nothing changes, nothing is audited.
    assert api(admin_user).put("/tenant/settings", {"defaultSlaHours": 24}, format="json").status_code == 200
    assert AuditEvent.objects.filter(tenant=tenant, action="tenant:settings_changed").count() == 1

    other_tenant.refresh_from_db()
    assert other_tenant.default_sla_hours is None


@pytest.mark.parametrize(
    "body",
    [
        {"defaultSlaHours": 0},
        {"defaultSlaHours": 87601},
        {"defaultSlaHours": "24"},
        {"defaultSlaHours": 1.5},
        {"defaultSlaHours": True},
        {"defaultSlaHours": 24, "other": 1},
        {},
        [],
    ],
)
def test_bad_tenant_settings_are_400(api, admin_user, tenant, body):
    response = api(admin_user).put("/tenant/settings", body, format="json")
    assert response.status_code == 400 and response.json()["code"] == "validation_error", body
    tenant.refresh_from_db()
    assert tenant.default_sla_hours is None
