"""/tenant/branding, /tenant/terminology, /tenant/themes, /manifest.json, /activity."""

import uuid

import pytest

from casemgmt.audit.models import AuditEvent
from casemgmt.tenancy.models import Tenant, Theme

TERMS = {
    "case": "Claim",
    "cases": "Claims",
    "task": "Job",
    "tasks": "Jobs",
    "step": "Stage",
    "steps": "Stages",
    "inbox": "Queue",
}


@pytest.fixture
def admin_api(api, admin_user):
    return api(admin_user)


@pytest.fixture
def viewer(make_user, tenant):
    return make_user(tenant, roles=["viewer"])


def actions(tenant, action):
    return list(AuditEvent.objects.filter(tenant=tenant, action=action).order_by("sequence"))


# --- branding -------------------------------------------------------------------------------------


def test_branding_defaults_and_any_user_may_read(api, viewer, tenant):
    response = api(viewer).get("/tenant/branding")
    assert response.status_code == 200
    assert response.json() == {
        "organizationName": tenant.name,
        "logoUrl": None,
        "primaryColor": "#2563eb",
        "secondaryColor": "#64748b",
    }


def test_branding_update_maps_to_the_stored_form(admin_api, tenant):
    body = {
        "organizationName": "Acme Claims",
        "logoUrl": "https://cdn.acme.test/logo.svg",
        "primaryColor": "#AA0011",
        "secondaryColor": "#00ff00",
    }
    response = admin_api.put("/tenant/branding", body, format="json")
    assert response.status_code == 200, response.content
    assert response.json() == {**body, "primaryColor": "#aa0011"}
    branding = tenant.branding
    branding.refresh_from_db()
    assert branding.company_name == "Acme Claims" and branding.logo_url == body["logoUrl"]
    assert branding.colors == {"primary": "#aa0011", "secondary": "#00ff00", "accent": "#f59e0b"}
    [event] = actions(tenant, "tenant:branding_changed")
    assert event.changes["organizationName"] == {"from": tenant.name, "to": "Acme Claims"}


def test_branding_partial_update_and_logo_removal(admin_api, tenant):
    admin_api.put("/tenant/branding", {"logoUrl": "http://x.test/l.png"}, format="json")
    response = admin_api.put("/tenant/branding", {"primaryColor": "#123456", "logoUrl": None}, format="json")
    assert response.json() == {
        "organizationName": tenant.name,
        "logoUrl": None,
        "primaryColor": "#123456",
        "secondaryColor": "#64748b",
    }
    # An unchanged value records no audit event.
    admin_api.put("/tenant/branding", {"primaryColor": "#123456"}, format="json")
    assert len(actions(tenant, "tenant:branding_changed")) == 2


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"primaryColor": "red"}, "primaryColor"),
        ({"primaryColor": "#12345"}, "primaryColor"),
        ({"secondaryColor": "#GGGGGG"}, "secondaryColor"),
        ({"logoUrl": "ftp://x.test/logo.png"}, "logoUrl"),
        ({"logoUrl": "javascript:alert(1)"}, "logoUrl"),
        ({"organizationName": ""}, "organizationName"),
        ({"organizationName": "x" * 201}, "organizationName"),
        ({"favicon": "x"}, "favicon"),
    ],
)
def test_branding_bad_input_is_400(admin_api, tenant, body, field):
    response = admin_api.put("/tenant/branding", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["details"]["field"] == field
    assert admin_api.get("/tenant/branding").json()["primaryColor"] == "#2563eb"


def test_branding_permissions(api, viewer, make_user, tenant, db):
    assert api(viewer).put("/tenant/branding", {"primaryColor": "#000000"}, format="json").status_code == 403
    assert api(None).get("/tenant/branding").status_code == 401
    assert api(None).put("/tenant/branding", {}, format="json").status_code == 401
    assert (
        api(make_user(tenant, permissions=["admin:*"]))
        .put("/tenant/branding", {"primaryColor": "#000000"}, format="json")
        .status_code
        == 200
    )


def test_branding_is_per_tenant(api, admin_api, make_user, other_tenant):
    admin_api.put("/tenant/branding", {"organizationName": "Mine"}, format="json")
    outsider = make_user(other_tenant, roles=["viewer"])
    assert api(outsider).get("/tenant/branding").json()["organizationName"] == other_tenant.name


# --- terminology ----------------------------------------------------------------------------------


def test_terminology_defaults(api, viewer):
    response = api(viewer).get("/tenant/terminology")
    assert response.status_code == 200
    assert response.json() == {
        "case": "Case",
        "cases": "Cases",
        "task": "Task",
        "tasks": "Tasks",
        "step": "Step",
        "steps": "Steps",
        "inbox": "Inbox",
    }


def test_terminology_replace(admin_api, api, viewer, tenant, make_user, other_tenant):
    response = admin_api.put("/tenant/terminology", TERMS, format="json")
    assert response.status_code == 200 and response.json() == TERMS
    assert api(viewer).get("/tenant/terminology").json() == TERMS
    assert api(make_user(other_tenant, roles=["viewer"])).get("/tenant/terminology").json()["case"] == "Case"
    [event] = actions(tenant, "tenant:terminology_changed")
    assert event.changes["case"] == {"from": "Case", "to": "Claim"}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"case": ""}, "case"),
        ({"tasks": "x" * 51}, "tasks"),
        ({"tasks": "   " + "x" * 50}, "tasks"),  # the cap counts the text as sent, before trimming
        ({"inbox": 3}, "inbox"),
        ({"workflow": "Flow"}, "workflow"),
        ({"steps": None}, "steps"),
    ],
)
def test_terminology_bad_input_is_400(admin_api, change, field):
    body = {**TERMS, **change}
    response = admin_api.put("/tenant/terminology", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["details"]["field"] == field


def test_terminology_put_needs_all_keys(admin_api):
    body = dict(TERMS)
    del body["inbox"]
    response = admin_api.put("/tenant/terminology", body, format="json")
    assert response.status_code == 400 and response.json()["details"]["field"] == "inbox"


def test_terminology_permissions(api, viewer, db):
    assert api(viewer).put("/tenant/terminology", TERMS, format="json").status_code == 403
    assert api(None).get("/tenant/terminology").status_code == 401


# --- themes ---------------------------------------------------------------------------------------

THEME_FIELDS = {"id", "name", "isDefault", "cssVariables"}


def test_four_seeded_themes_one_default(api, viewer):
    themes = api(viewer).get("/tenant/themes").json()
    # Newest first: seeded in the order Light, Dark, High Contrast Light, High Contrast Dark.
    assert [t["name"] for t in themes] == ["High Contrast Dark", "High Contrast Light", "Dark", "Light"]
    assert [t["isDefault"] for t in themes] == [False, False, False, True]
    assert all(set(t) == THEME_FIELDS and isinstance(t["cssVariables"], dict) for t in themes)


def test_theme_create_update_delete(admin_api, tenant):
    created = admin_api.post(
        "/tenant/themes", {"name": "Ocean", "cssVariables": {"--color-bg": "#003366"}}, format="json"
    )
    assert created.status_code == 201, created.content
    theme = created.json()
    assert (
        set(theme) == THEME_FIELDS
        and theme["isDefault"] is False
        and theme["cssVariables"] == {"--color-bg": "#003366"}
    )
    uuid.UUID(theme["id"])

    updated = admin_api.put(
        f"/tenant/themes/{theme['id']}",
        {"name": "Deep Ocean", "cssVariables": {"--color-bg": "#001133", "--radius": "4px"}},
        format="json",
    )
    assert updated.status_code == 200
    assert updated.json() == {
        "id": theme["id"],
        "name": "Deep Ocean",
        "isDefault": False,
        "cssVariables": {"--color-bg": "#001133", "--radius": "4px"},
    }

    assert admin_api.delete(f"/tenant/themes/{theme['id']}").status_code == 204
    assert "Deep Ocean" not in [t["name"] for t in admin_api.get("/tenant/themes").json()]
    operations = [e.changes["operation"] for e in actions(tenant, "tenant:theme_changed")]
    assert operations == ["created", "updated", "deleted"]


def test_setting_a_default_unsets_the_others(admin_api, tenant):
    created = admin_api.post(
        "/tenant/themes", {"name": "Brand", "cssVariables": {}, "isDefault": True}, format="json"
    ).json()
    assert created["isDefault"] is True
    assert list(Theme.objects.filter(tenant=tenant, is_default=True).values_list("name", flat=True)) == [
        "Brand"
    ]
    dark = Theme.objects.get(tenant=tenant, name="Dark")
    response = admin_api.put(
        f"/tenant/themes/{dark.id}", {"name": "Dark", "cssVariables": {}, "isDefault": True}, format="json"
    )
    assert response.json()["isDefault"] is True
    assert list(Theme.objects.filter(tenant=tenant, is_default=True).values_list("name", flat=True)) == [
        "Dark"
    ]


def test_default_theme_cannot_be_deleted_or_undefaulted(admin_api, tenant):
    light = Theme.objects.get(tenant=tenant, name="Light")
    response = admin_api.delete(f"/tenant/themes/{light.id}")
    assert response.status_code == 409 and response.json()["code"] == "invalid_state"
    response = admin_api.put(
        f"/tenant/themes/{light.id}", {"name": "Light", "cssVariables": {}, "isDefault": False}, format="json"
    )
    assert response.status_code == 409
    assert Theme.objects.get(pk=light.pk).is_default


def test_theme_name_is_unique_per_tenant(admin_api, tenant):
    assert (
        admin_api.post("/tenant/themes", {"name": "Dark", "cssVariables": {}}, format="json").status_code
        == 409
    )
    light = Theme.objects.get(tenant=tenant, name="Light")
    assert (
        admin_api.put(
            f"/tenant/themes/{light.id}", {"name": "Dark", "cssVariables": {}}, format="json"
        ).status_code
        == 409
    )


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"cssVariables": {}}, "name"),
        ({"name": "", "cssVariables": {}}, "name"),
        ({"name": "T"}, "cssVariables"),
        ({"name": "T", "cssVariables": []}, "cssVariables"),
        ({"name": "T", "cssVariables": {"color": "red"}}, "cssVariables"),
        ({"name": "T", "cssVariables": {"--bg": "red;} body{display:none"}}, "cssVariables"),
        ({"name": "T", "cssVariables": {"--bg": 5}}, "cssVariables.--bg"),
        ({"name": "T", "cssVariables": {}, "isDefault": "yes"}, "isDefault"),
    ],
)
def test_theme_bad_input_is_400(admin_api, tenant, body, field):
    response = admin_api.post("/tenant/themes", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["details"]["field"] == field
    light = Theme.objects.get(tenant=tenant, name="Light")
    assert admin_api.put(f"/tenant/themes/{light.id}", body, format="json").status_code == 400


def test_other_tenants_theme_is_404(admin_api, other_tenant):
    foreign = Theme.objects.get(tenant=other_tenant, name="Dark")
    assert (
        admin_api.put(
            f"/tenant/themes/{foreign.id}", {"name": "Mine", "cssVariables": {}}, format="json"
        ).status_code
        == 404
    )
    assert admin_api.delete(f"/tenant/themes/{foreign.id}").status_code == 404
    assert Theme.objects.filter(pk=foreign.pk, name="Dark").exists()
    assert admin_api.delete(f"/tenant/themes/{uuid.uuid4()}").status_code == 404


def test_theme_permissions(api, viewer, tenant, db):
    dark = Theme.objects.get(tenant=tenant, name="Dark")
    client = api(viewer)
    assert client.post("/tenant/themes", {"name": "X", "cssVariables": {}}, format="json").status_code == 403
    assert (
        client.put(f"/tenant/themes/{dark.id}", {"name": "X", "cssVariables": {}}, format="json").status_code
        == 403
    )
    assert client.delete(f"/tenant/themes/{dark.id}").status_code == 403
    anon = api(None)
    assert anon.get("/tenant/themes").status_code == 401
    assert anon.delete(f"/tenant/themes/{dark.id}").status_code == 401


# --- manifest -------------------------------------------------------------------------------------


def test_manifest_is_public_and_built_from_branding(admin_api, api, tenant, other_tenant):
    admin_api.put(
        "/tenant/branding",
        {
            "organizationName": "Acme Claims Department",
            "logoUrl": "https://cdn.test/logo.png?v=2",
            "primaryColor": "#112233",
        },
        format="json",
    )
    response = api(None).get("/manifest.json", {"tenant": str(tenant.id)})
    assert response.status_code == 200
    assert response.json() == {
        "name": "Acme Claims Department",
        "short_name": "Acme Claims ",
        "start_url": "/",
        "display": "standalone",
        "theme_color": "#112233",
        "background_color": "#ffffff",
        "icons": [{"src": "https://cdn.test/logo.png?v=2", "sizes": "any", "type": "image/png"}],
    }


def test_manifest_without_tenant(api, db):
    Tenant.objects.all().delete()
    generic = api(None).get("/manifest.json").json()
    assert generic["name"] == "Case Management" and generic["icons"] == []
    only = Tenant.objects.create(name="Solo")
    from casemgmt.tenancy.models import Branding

    Branding.objects.create(tenant=only, company_name="Solo Inc", colors={"primary": "#000001"})
    single = api(None).get("/manifest.json").json()
    assert single["name"] == "Solo Inc" and single["theme_color"] == "#000001"


def test_manifest_unknown_tenant_is_404(api, db):
    assert api(None).get("/manifest.json", {"tenant": str(uuid.uuid4())}).status_code == 404
    assert api(None).get("/manifest.json", {"tenant": "nope"}).status_code == 404


def test_manifest_ignores_a_bad_token(db):
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer junk")
    assert client.get("/manifest.json").status_code == 200


# --- activity -------------------------------------------------------------------------------------


def test_activity_lists_recent_tenant_events_newest_first(
    admin_api, api, viewer, tenant, admin_user, other_tenant, make_user
):
    admin_api.put("/tenant/terminology", TERMS, format="json")
    admin_api.put("/tenant/branding", {"primaryColor": "#000000"}, format="json")
    make_user(other_tenant, roles=["viewer"])
    response = api(viewer).get("/activity")
    assert response.status_code == 200
    items = response.json()
    assert all(set(item) == {"id", "timestamp", "actor", "action", "details"} for item in items)
    assert [i["action"] for i in items[:2]] == ["tenant:branding_changed", "tenant:terminology_changed"]
    assert items[0]["actor"] == str(admin_user.id) and items[0]["timestamp"].endswith("Z")
    # A reader without audit:read sees what happened to which resource, never the changes.
    assert all(set(item["details"]) == {"resource"} for item in items)
    assert items[0]["details"] == {"resource": f"tenants/{tenant.id}/branding"}
    expected = AuditEvent.objects.filter(tenant=tenant).count()
    assert len(items) == min(expected, 20)
    own_ids = set(map(str, AuditEvent.objects.filter(tenant=tenant).values_list("id", flat=True)))
    assert {i["id"] for i in items} <= own_ids


def test_activity_shows_changes_only_to_audit_readers(admin_api, api, make_user, tenant):
    auditor = make_user(tenant, permissions=["audit:read"])
    worker = make_user(tenant, permissions=["tasks:read"])
    admin_api.put("/tenant/branding", {"primaryColor": "#000000"}, format="json")
    [latest] = api(auditor).get("/activity", {"limit": 1}).json()
    assert latest["details"] == {
        "resource": f"tenants/{tenant.id}/branding",
        "changes": {"primaryColor": {"from": "#2563eb", "to": "#000000"}},
    }
    [latest] = api(worker).get("/activity", {"limit": 1}).json()
    assert latest["details"] == {"resource": f"tenants/{tenant.id}/branding"}


def test_activity_limit(admin_api):
    assert len(admin_api.get("/activity", {"limit": 1}).json()) == 1
    assert admin_api.get("/activity", {"limit": 0}).status_code == 400
    assert admin_api.get("/activity", {"limit": 101}).status_code == 400
    assert admin_api.get("/activity", {"limit": "many"}).status_code == 400


def test_activity_anonymous_is_401(api, db):
    assert api(None).get("/activity").status_code == 401
