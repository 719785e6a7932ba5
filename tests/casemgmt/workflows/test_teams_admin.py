"""Django admin: teams and their members, and a user's out of office, saved through the services."""

from __future__ import annotations

from datetime import timedelta

import pytest

from casemgmt.accounts.models import Team, User
from shared.api.time import now_ms
from tests.casemgmt.conftest import admin_client
from tests.casemgmt.workflows.conftest import audit_actions

pytestmark = pytest.mark.django_db

INLINE = "memberships"


def test_tenant_admin_creates_a_team_with_a_member_and_sets_out_of_office(admin_user, make_user, tenant):
    worker = make_user(tenant, permissions=["tasks:claim"])
    client = admin_client(admin_user)
    assert client.get("/admin/accounts/team/add/").status_code == 200
    response = client.post(
        "/admin/accounts/team/add/",
        {
            "name": "Night shift",
            "description": "",
            f"{INLINE}-TOTAL_FORMS": "1",
            f"{INLINE}-INITIAL_FORMS": "0",
            f"{INLINE}-0-user": str(worker.pk),
            f"{INLINE}-0-lead": "on",
        },
        follow=True,
    )
    assert response.status_code == 200, [str(m) for m in response.context["messages"]]
    team = Team.objects.get(tenant=tenant, name="Night shift")
    assert list(team.memberships.values_list("user_id", "lead")) == [(worker.pk, True)]
    assert audit_actions(tenant.id, f"teams/{team.pk}") == ["team:created", "team:member_added"]

    page = client.get(f"/admin/accounts/user/{worker.pk}/change/")
    assert page.status_code == 200 and b"away_until" in page.content
    form = page.context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None and k not in ("roles", "last_login")}
    starts, until = now_ms() - timedelta(hours=1), now_ms() + timedelta(days=1)
    data.update(
        roles=[str(r.pk) for r in worker.roles.all()],
        away_from_0=starts.strftime("%Y-%m-%d"),
        away_from_1=starts.strftime("%H:%M:%S"),
        away_until_0=until.strftime("%Y-%m-%d"),
        away_until_1=until.strftime("%H:%M:%S"),
        away_delegate=str(admin_user.pk),
        is_active="on",
    )
    data.pop("is_staff", None)
    client.post(f"/admin/accounts/user/{worker.pk}/change/", data, follow=True)
    worker = User.objects.get(pk=worker.pk)
    assert worker.away_delegate_id == admin_user.pk and worker.away_until is not None
    assert "user:out_of_office_set" in audit_actions(tenant.id, f"users/{worker.pk}")
