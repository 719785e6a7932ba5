"""Edits in Django admin go through the services: audit events, task release, validation and the
default-theme rules are the same as through the API."""

import json

import pytest
from django.test import Client

from casemgmt.accounts.models import Role, User
from casemgmt.audit.models import AuditEvent
from casemgmt.tenancy.models import Branding, Theme
from tests.casemgmt.conftest import PASSWORD


def browser(user) -> Client:
    client = Client()
    assert client.login(email=user.email, password=PASSWORD)
    return client


def form_data(client: Client, url: str) -> dict:
    """The change form's current values as the browser would post them."""
    form = client.get(url).context["adminform"].form
    data = {}
    for name, field in form.fields.items():
        value = form.initial.get(name, field.initial)
        if isinstance(value, bool):
            if value:
                data[name] = "on"
        elif isinstance(value, (dict, list)) and name not in ("roles",):
            data[name] = json.dumps(value)
        elif name == "roles":
            data[name] = [str(getattr(r, "pk", r)) for r in value or []]
        elif value is not None:
            data[name] = value
    return data


def events(tenant, action, resource=None):
    found = AuditEvent.objects.filter(tenant=tenant, action=action)
    return list(found.filter(resource=resource) if resource else found)


def test_unticking_active_disables_through_the_service(admin_user, make_user, tenant):
    client = browser(admin_user)
    user = make_user(tenant, roles=["viewer"])
    url = f"/admin/accounts/user/{user.pk}/change/"
    data = form_data(client, url)
    data.pop("is_active")
    response = client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert not User.objects.get(pk=user.pk).is_active
    [event] = events(tenant, "user:disabled", f"principals/{user.id}")
    assert event.actor == str(admin_user.id)


def test_admin_cannot_disable_itself_in_admin(admin_user):
    client = browser(admin_user)
    url = f"/admin/accounts/user/{admin_user.pk}/change/"
    data = form_data(client, url)
    data.pop("is_active")
    response = client.post(url, data)
    assert response.status_code == 200 and "is_active" in response.context["adminform"].form.errors
    assert User.objects.get(pk=admin_user.pk).is_active


def test_role_edit_in_admin_records_role_assigned_and_refuses_escalation(admin_user, make_user, tenant):
    user = make_user(tenant, roles=["viewer"])
    url = f"/admin/accounts/user/{user.pk}/change/"
    designer = Role.objects.get(tenant=tenant, name="workflow_designer")
    client = browser(admin_user)
    data = form_data(client, url)
    data["roles"] = [str(designer.pk)]
    assert client.post(url, data).status_code == 302
    assert User.objects.get(pk=user.pk).role_names == ["workflow_designer"]
    [event] = events(tenant, "user:role_assigned", f"principals/{user.id}")
    assert event.changes == {"roles": {"from": ["viewer"], "to": ["workflow_designer"]}}

    # A staff user holding only admin:users cannot hand out the admin role.
    limited = make_user(tenant, permissions=["admin:users"], is_staff=True)
    client = browser(limited)
    data = form_data(client, url)
    data["roles"] = [str(Role.objects.get(tenant=tenant, name="admin").pk)]
    response = client.post(url, data)
    assert response.status_code == 200 and "roles" in response.context["adminform"].form.errors
    assert User.objects.get(pk=user.pk).role_names == ["workflow_designer"]


def test_role_admin_validates_permissions_and_audits(admin_user, tenant):
    client = browser(admin_user)
    role = Role.objects.get(tenant=tenant, name="viewer")
    url = f"/admin/accounts/role/{role.pk}/change/"
    data = form_data(client, url)
    data["permissions"] = json.dumps(["cases:read", "no:such"])
    response = client.post(url, data)
    assert response.status_code == 200 and "permissions" in response.context["adminform"].form.errors
    data["permissions"] = json.dumps(["cases:read"])
    assert client.post(url, data).status_code == 302
    assert Role.objects.get(pk=role.pk).permissions == ["cases:read"]
    [event] = events(tenant, "role:permissions_changed", f"roles/{role.id}")
    assert event.changes["permissions"]["to"] == ["cases:read"]


def test_branding_edit_in_admin_is_audited(admin_user, tenant):
    client = browser(admin_user)
    url = f"/admin/tenancy/branding/{tenant.branding.pk}/change/"
    data = form_data(client, url)
    data["company_name"] = "Renamed Ltd"
    data["powered_by"] = "Acme"
    assert client.post(url, data).status_code == 302
    assert Branding.objects.get(tenant=tenant).company_name == "Renamed Ltd"
    [event] = events(tenant, "tenant:branding_changed")
    assert event.changes["organizationName"]["to"] == "Renamed Ltd"
    assert event.changes["poweredBy"] == {"from": None, "to": "Acme"}
    data["colors"] = json.dumps({"primary": "red"})
    response = client.post(url, data)
    assert response.status_code == 200 and "colors" in response.context["adminform"].form.errors


def test_terminology_edit_in_admin_is_audited_and_validated(admin_user, tenant):
    client = browser(admin_user)
    url = f"/admin/tenancy/terminology/{tenant.terminology.pk}/change/"
    data = form_data(client, url)
    labels = json.loads(data["labels"])
    data["labels"] = json.dumps({**labels, "case": "Claim"})
    assert client.post(url, data).status_code == 302
    [event] = events(tenant, "tenant:terminology_changed")
    assert event.changes == {"case": {"from": "Case", "to": "Claim"}}
    data["labels"] = json.dumps({"case": "Claim"})
    response = client.post(url, data)
    assert response.status_code == 200 and "labels" in response.context["adminform"].form.errors


@pytest.fixture
def themes(tenant):
    return Theme.objects.get(tenant=tenant, is_default=True), Theme.objects.get(tenant=tenant, name="Dark")


def test_theme_default_rules_hold_in_admin(admin_user, tenant, themes):
    default, dark = themes
    client = browser(admin_user)
    # The default theme cannot be unticked nor deleted.
    url = f"/admin/tenancy/theme/{default.pk}/change/"
    data = form_data(client, url)
    data.pop("is_default")
    response = client.post(url, data)
    assert response.status_code == 200 and "is_default" in response.context["adminform"].form.errors
    assert client.post(f"/admin/tenancy/theme/{default.pk}/delete/", {"post": "yes"}).status_code == 403
    assert Theme.objects.filter(pk=default.pk, is_default=True).exists()
    # Making another theme the default unsets the previous one, and is audited.
    url = f"/admin/tenancy/theme/{dark.pk}/change/"
    data = form_data(client, url)
    data["is_default"] = "on"
    assert client.post(url, data).status_code == 302
    assert list(Theme.objects.filter(tenant=tenant, is_default=True)) == [dark]
    assert events(tenant, "tenant:theme_changed", f"themes/{dark.id}")
    # The former default is now an ordinary theme: deleting it goes through the service.
    assert client.post(f"/admin/tenancy/theme/{default.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not Theme.objects.filter(pk=default.pk).exists()
    [deleted] = [e for e in events(tenant, "tenant:theme_changed", f"themes/{default.id}")
                 if e.changes["operation"] == "deleted"]  # fmt: skip
    assert deleted.actor == str(admin_user.id)


def test_theme_added_in_admin_as_default_leaves_one_default(admin_user, tenant):
    response = browser(admin_user).post(
        "/admin/tenancy/theme/add/", {"name": "New", "css_variables": '{"--a": "b"}', "is_default": "on"}
    )
    assert response.status_code == 302, response.content
    assert list(Theme.objects.filter(tenant=tenant, is_default=True).values_list("name", flat=True)) == [
        "New"
    ]
    [event] = events(tenant, "tenant:theme_changed")
    assert event.changes["operation"] == "created"
