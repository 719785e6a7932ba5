"""Two tenants with cases (and one human task each) made through the real services and API; time is
shifted with plain updates where a test needs deadlines in the past."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from casemgmt.accounts.models import User
from casemgmt.cases.models import Case
from casemgmt.cases.services import case_cancel, case_close, case_create, case_type_create
from casemgmt.workflows.models import CaseStep
from tests.casemgmt.workflows.conftest import Flow, task_step


@dataclass
class World:
    tenant: Any
    admin: Any
    flow: Flow
    cases: list[Case]


def populate(api, admin) -> World:
    """Four claims, each with a human review task (skipped once its case is closed), and two
    complaints without a workflow:
    - fresh: active, deadline ahead (not measured for SLA)
    - on_time: created 2 h ago, closed 1 h ago, before its deadline
    - late: created 4 h ago, closed 1 h ago, 2 h after its deadline
    - overdue: active, deadline passed 1 h ago
    - a cancelled complaint (not measured) and an active one within its deadline"""
    flow = Flow(api, admin)
    flow.workflow([task_step("review")])
    with_task = flow.case({"amount": 100, "title": "with task"})
    claims = [Case.objects.get(pk=with_task["id"])]
    complaint = case_type_create(
        user=admin, key="complaint", display_name="Complaint", schema={"type": "object"}, sla_hours=24
    )
    claims += [Case.objects.get(pk=flow.case({"amount": n, "title": f"claim {n}"})["id"]) for n in (1, 2, 3)]
    complaints = [case_create(user=admin, case_type=complaint, data={"amount": n}) for n in (7, 8)]
    now = timezone.now()
    fresh, on_time, late, overdue = claims
    Case.objects.filter(pk=on_time.pk).update(
        created_at=now - timedelta(hours=2), sla_deadline=now + timedelta(hours=1)
    )
    Case.objects.filter(pk=late.pk).update(
        created_at=now - timedelta(hours=4), sla_deadline=now - timedelta(hours=3)
    )
    Case.objects.filter(pk=overdue.pk).update(sla_deadline=now - timedelta(hours=1))
    Case.objects.filter(pk=fresh.pk).update(sla_deadline=now + timedelta(hours=5))
    case_close(user=admin, case=Case.objects.get(pk=on_time.pk))
    case_close(user=admin, case=Case.objects.get(pk=late.pk))
    Case.objects.filter(pk__in=[on_time.pk, late.pk]).update(closed_at=now - timedelta(hours=1))
    case_cancel(user=admin, case=complaints[0])
    assert CaseStep.objects.filter(case_id=fresh.pk, is_task=True).exists(), (
        "the review task was not activated"
    )
    return World(tenant=admin.tenant, admin=admin, flow=flow, cases=[*claims, *complaints])


@pytest.fixture
def world(api, admin_user, django_capture_on_commit_callbacks) -> World:
    with django_capture_on_commit_callbacks(execute=True):
        return populate(api, admin_user)


@pytest.fixture
def other_world(api, other_tenant, django_capture_on_commit_callbacks) -> World:
    admin = User.objects.get(tenant=other_tenant, roles__name="admin")
    with django_capture_on_commit_callbacks(execute=True):
        return populate(api, admin)


@pytest.fixture
def analyst(tenant, make_user):
    return make_user(tenant, permissions=["reports:read"])


@pytest.fixture
def lacking(tenant, make_user):
    """A member with everything but reports:read."""
    return make_user(tenant, permissions=["cases:read", "cases:update", "tasks:claim", "audit:read"])


@pytest.fixture
def outsider(other_tenant, make_user):
    return make_user(other_tenant, permissions=["*"])
