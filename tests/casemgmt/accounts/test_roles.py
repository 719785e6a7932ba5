"""/admin/roles, and how role permissions decide access (union, wildcards, no stale cache)."""

import uuid

import pytest

from casemgmt.accounts.models import Role
from casemgmt.audit.models import AuditEvent

ROLE_FIELDS = {"id", "name", "displayName", "permissions", "createdAt"}


@pytest.fixture
def admin_api(api, admin_user):
    return api(admin_user)


def test_default_roles_are_seeded(admin_api):
    response = admin_api.get("/admin/roles")
    assert response.status_code == 200
    roles = {r["name"]: r for r in response.json()}
    assert set(roles) == {"admin", "workflow_designer", "case_worker", "viewer"}
    assert all(set(r) == ROLE_FIELDS for r in roles.values())
    assert roles["admin"]["permissions"] == ["*"] and roles["admin"]["displayName"] == "Admin"
    assert roles["workflow_designer"]["permissions"] == ["workflows:*", "cases:read"]
    assert roles["viewer"]["permissions"] == ["cases:read", "vault:download"]
    # Exactly the documented set: no tasks:read (a case worker reads the tasks it may act on
    # through tasks:claim / tasks:complete instead).
    assert roles["case_worker"]["permissions"] == [
        "cases:read", "cases:update", "tasks:claim", "tasks:complete", "vault:download", "vault:upload",
    ]  # fmt: skip
    assert roles["case_worker"]["displayName"] == "Case Worker"


def test_create_role_and_list_only_own_tenant(admin_api, tenant, other_tenant):
    Role.objects.create(tenant=other_tenant, name="foreign", display_name="Foreign", permissions=[])
    response = admin_api.post(
        "/admin/roles",
        {"name": "auditor", "displayName": "Auditor", "permissions": ["audit:read", "admin:*", "audit:read"]},
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == ROLE_FIELDS and body["createdAt"].endswith("Z")
    assert body["name"] == "auditor" and body["permissions"] == ["audit:read", "admin:*"]
    names = [r["name"] for r in admin_api.get("/admin/roles").json()]
    assert "auditor" in names and "foreign" not in names
    assert AuditEvent.objects.filter(
        tenant=tenant, action="role:created", resource=f"roles/{body['id']}"
    ).exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "x", "displayName": "X", "permissions": ["cases:fly"]}, "permissions[0]"),
        ({"name": "x", "displayName": "X", "permissions": ["cases:read", "nope:*"]}, "permissions[1]"),
        ({"name": "x", "displayName": "X", "permissions": "cases:read"}, "permissions"),
        ({"name": "has space", "displayName": "X", "permissions": []}, "name"),
        ({"displayName": "X", "permissions": []}, "name"),
        ({"name": "x", "permissions": []}, "displayName"),
        ({"name": "x", "displayName": "X"}, "permissions"),
    ],
)
def test_create_role_bad_input_is_400(admin_api, body, field):
    response = admin_api.post("/admin/roles", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["details"]["field"] == field


def test_every_known_permission_and_wildcard_is_accepted(admin_api):
    permissions = [
        "*",
        "admin:*",
        "workflows:*",
        "cases:create",
        "admin:erasure",
        "agents:write",
        "connectors:test",
    ]
    response = admin_api.post(
        "/admin/roles", {"name": "wide", "displayName": "Wide", "permissions": permissions}, format="json"
    )
    assert response.status_code == 201 and response.json()["permissions"] == permissions


def test_duplicate_role_name_is_409(admin_api):
    response = admin_api.post(
        "/admin/roles", {"name": "viewer", "displayName": "V", "permissions": []}, format="json"
    )
    assert response.status_code == 409 and response.json()["code"] == "already_exists"


def test_set_permissions(admin_api, tenant):
    role = Role.objects.get(tenant=tenant, name="viewer")
    response = admin_api.put(
        f"/admin/roles/{role.id}/permissions", {"permissions": ["cases:read", "tasks:read"]}, format="json"
    )
    assert response.status_code == 200
    body = response.json()
    assert set(body) == ROLE_FIELDS and body["permissions"] == ["cases:read", "tasks:read"]
    role.refresh_from_db()
    assert role.permissions == ["cases:read", "tasks:read"]
    assert AuditEvent.objects.filter(tenant=tenant, action="role:permissions_changed").exists()


@pytest.mark.parametrize(
    "body",
    [
        {"permissions": ["cases:nope"]},
        {"permissions": None},
        {},
        {"permissions": ["cases:read"], "name": "x"},
    ],
)
def test_set_permissions_bad_input_is_400(admin_api, tenant, body):
    role = Role.objects.get(tenant=tenant, name="viewer")
    assert admin_api.put(f"/admin/roles/{role.id}/permissions", body, format="json").status_code == 400
    role.refresh_from_db()
    assert role.permissions == ["cases:read", "vault:download"]


def test_other_tenants_role_is_404(admin_api, other_tenant):
    role = Role.objects.get(tenant=other_tenant, name="viewer")
    assert (
        admin_api.put(
            f"/admin/roles/{role.id}/permissions", {"permissions": ["*"]}, format="json"
        ).status_code
        == 404
    )
    role.refresh_from_db()
    assert role.permissions == ["cases:read", "vault:download"]
    assert (
        admin_api.put(
            f"/admin/roles/{uuid.uuid4()}/permissions", {"permissions": []}, format="json"
        ).status_code
        == 404
    )


@pytest.mark.parametrize(
    ("method", "path"),
    [("get", "/admin/roles"), ("post", "/admin/roles"), ("put", "/admin/roles/{id}/permissions")],
)
def test_role_endpoints_need_admin_roles(api, make_user, tenant, method, path):
    url = path.format(id=Role.objects.get(tenant=tenant, name="viewer").id)
    lacking = make_user(tenant, permissions=["admin:users"])
    assert getattr(api(lacking), method)(url, {}, format="json").status_code == 403
    assert getattr(api(None), method)(url, {}, format="json").status_code == 401


# --- how permissions apply ------------------------------------------------------------------------


def test_star_admin_star_and_exact_permissions(api, make_user, tenant):
    assert api(make_user(tenant, permissions=["*"])).get("/admin/roles").status_code == 200
    assert api(make_user(tenant, permissions=["admin:*"])).get("/admin/roles").status_code == 200
    assert api(make_user(tenant, permissions=["admin:roles"])).get("/admin/roles").status_code == 200
    assert api(make_user(tenant, permissions=["admin:users"])).get("/admin/roles").status_code == 403
    assert api(make_user(tenant, permissions=["workflows:*"])).get("/admin/roles").status_code == 403
    assert api(make_user(tenant, permissions=[])).get("/admin/roles").status_code == 403


def test_permissions_are_the_union_of_roles(api, make_user, tenant):
    Role.objects.create(tenant=tenant, name="only_users", display_name="U", permissions=["admin:users"])
    Role.objects.create(tenant=tenant, name="only_roles", display_name="R", permissions=["admin:roles"])
    client = api(make_user(tenant, roles=["only_users", "only_roles"]))
    assert client.get("/admin/roles").status_code == 200
    assert client.get("/admin/principals").status_code == 200
    assert client.put("/tenant/terminology", {}, format="json").status_code == 403


def test_role_changes_apply_on_the_next_request(admin_api, api, make_user, tenant):
    role = Role.objects.create(tenant=tenant, name="flip", display_name="Flip", permissions=[])
    user = make_user(tenant, roles=["flip"])
    client = api(user)  # the same token throughout
    assert client.get("/admin/roles").status_code == 403
    assert (
        admin_api.put(
            f"/admin/roles/{role.id}/permissions", {"permissions": ["admin:roles"]}, format="json"
        ).status_code
        == 200
    )
    assert client.get("/admin/roles").status_code == 200
    assert admin_api.put(f"/admin/principals/{user.id}", {"roles": []}, format="json").status_code == 200
    assert client.get("/admin/roles").status_code == 403
