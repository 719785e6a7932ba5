"""An administrator may grant only permissions it holds itself (admin:users or admin:roles alone
never lead to `*`)."""

import pytest

from casemgmt.accounts.models import Role, User
from casemgmt.audit.models import AuditEvent


@pytest.fixture
def user_admin(make_user, tenant):
    return make_user(tenant, permissions=["admin:users", "cases:read", "vault:download"])


@pytest.fixture
def role_admin(make_user, tenant):
    return make_user(tenant, permissions=["admin:roles", "cases:read"])


def test_user_admin_cannot_assign_the_admin_role_to_itself_or_others(api, user_admin, make_user, tenant):
    client = api(user_admin)
    other = make_user(tenant, roles=["viewer"])
    for target in (user_admin, other):
        response = client.put(f"/admin/principals/{target.id}", {"roles": ["admin"]}, format="json")
        assert response.status_code == 403, response.content
        assert response.json()["code"] == "permission_denied"
        assert "admin" not in User.objects.get(pk=target.pk).role_names
    response = client.post(
        "/admin/principals",
        {"email": "new-admin@example.test", "displayName": "N", "roles": ["admin"]},
        format="json",
    )
    assert response.status_code == 403
    assert not User.objects.filter(email="new-admin@example.test").exists()
    assert not AuditEvent.objects.filter(tenant=tenant, action="user:role_assigned").exists()


def test_user_admin_may_assign_roles_within_its_own_permissions(api, user_admin, make_user, tenant):
    client = api(user_admin)
    other = make_user(tenant, roles=[])
    # viewer = cases:read + vault:download, both held by the caller.
    response = client.put(f"/admin/principals/{other.id}", {"roles": ["viewer"]}, format="json")
    assert response.status_code == 200, response.content
    response = client.post(
        "/admin/principals",
        {"email": "new-viewer@example.test", "displayName": "N", "roles": ["viewer"]},
        format="json",
    )
    assert response.status_code == 201, response.content


def test_roles_a_principal_already_has_are_not_a_new_grant(api, user_admin, make_user, tenant):
    admin = make_user(tenant, roles=["admin"])
    response = api(user_admin).put(
        f"/admin/principals/{admin.id}",
        {"displayName": "Renamed", "roles": ["admin", "viewer"]},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert sorted(User.objects.get(pk=admin.pk).role_names) == ["admin", "viewer"]


def test_role_admin_cannot_widen_a_role_beyond_its_own_permissions(api, role_admin, tenant):
    client = api(role_admin)
    own_role = role_admin.roles.get()
    viewer = Role.objects.get(tenant=tenant, name="viewer")
    for role in (own_role, viewer):
        response = client.put(f"/admin/roles/{role.id}/permissions", {"permissions": ["*"]}, format="json")
        assert response.status_code == 403, response.content
    assert Role.objects.get(pk=own_role.pk).permissions == ["admin:roles", "cases:read"]
    response = client.post(
        "/admin/roles", {"name": "wide", "displayName": "Wide", "permissions": ["admin:*"]}, format="json"
    )
    assert response.status_code == 403
    assert not Role.objects.filter(tenant=tenant, name="wide").exists()
    # Within its own permissions, and keeping what the role already had, it may edit.
    response = client.put(
        f"/admin/roles/{viewer.id}/permissions",
        {"permissions": ["cases:read", "vault:download"]},
        format="json",
    )
    assert response.status_code == 200, response.content
    response = client.post(
        "/admin/roles", {"name": "reader", "displayName": "R", "permissions": ["cases:read"]}, format="json"
    )
    assert response.status_code == 201, response.content
