"""Every Django admin page, generated from the admin's own registry: a tenant admin never sees,
opens or changes another tenant's objects. A model registered later is covered by the same loop
(and the test fails until `populate` gives the other tenant one of its rows to look for)."""

from __future__ import annotations

import uuid

import pytest
from django.contrib import admin
from django.urls import reverse

from casemgmt.accounts.models import User
from casemgmt.tenancy.models import Tenant
from tests.casemgmt.conftest import admin_client
from tests.casemgmt.vault.conftest import file_of, vault_root  # noqa: F401 - fixture reused here
from tests.casemgmt.workflows.conftest import Flow, ok, task_step


def populate(api, make_user, tenant: Tenant, marker: str) -> None:
    """One of everything a tenant admin manages, through the API, with `marker` in its text."""
    admin_user = User.objects.get(tenant=tenant, roles__name="admin")
    client = api(admin_user)
    flow = Flow(api, admin_user)
    flow.workflow([task_step("review")], name=f"Flow {marker}")
    case = flow.case({"amount": 1, "title": f"Case {marker}"})
    ok(
        client.post(
            f"/cases/{case['id']}/documents", {"file": file_of(b"x", f"{marker}.txt")}, format="multipart"
        ),
        201,
    )
    ok(
        client.post("/prompt-templates", {"name": f"p{marker}", "template": f"Hi {marker}"}, format="json"),
        201,
    )
    ok(client.put("/connectors/slack/config", {"config": {"token": f"xoxb-{marker}"}}, format="json"))
    team = ok(client.post("/teams", {"name": f"Team {marker}"}, format="json"), 201)
    ok(client.post(f"/teams/{team['id']}/members", {"userId": str(admin_user.id)}, format="json"), 201)
    subject = make_user(tenant, permissions=["cases:read"], display_name=f"Subject {marker}")
    ok(client.post("/admin/erasure", {"userId": str(subject.id), "reason": marker}, format="json"), 202)


def scoped_models():
    for model, model_admin in admin.site._registry.items():
        if model is not Tenant:
            yield model, model_admin


@pytest.fixture
def two_populated_tenants(api, make_user, tenant, other_tenant):
    mine, theirs = uuid.uuid4().hex[:10], uuid.uuid4().hex[:10]
    populate(api, make_user, tenant, mine)
    populate(api, make_user, other_tenant, theirs)
    return tenant, other_tenant, theirs


def test_no_admin_page_shows_or_opens_another_tenants_objects(admin_user, two_populated_tenants):
    tenant, other_tenant, their_marker = two_populated_tenants
    client = admin_client(admin_user)
    for model, model_admin in scoped_models():
        name = f"{model._meta.app_label}_{model._meta.model_name}"
        field = getattr(model_admin, "tenant_field", None)
        assert field, f"{name} is registered without tenant scoping"
        theirs = list(model._default_manager.filter(**{f"{field}_id": other_tenant.id}))
        assert theirs, f"populate() made no {name} for the other tenant: nothing to look for"

        listing = client.get(reverse(f"admin:{name}_changelist"))
        assert listing.status_code == 200, name
        shown = listing.context["cl"].queryset
        assert shown.exists() and all(getattr(o, f"{field}_id") == tenant.id for o in shown), name
        assert their_marker.encode() not in listing.content, name
        for obj in shown[:3]:
            own = client.get(reverse(f"admin:{name}_change", args=[obj.pk]))
            assert own.status_code == 200 and their_marker.encode() not in own.content, name

        for obj in theirs:
            for view in ("change", "history", "delete"):
                response = client.get(reverse(f"admin:{name}_{view}", args=[obj.pk]))
                # Outside the admin's queryset the object "does not exist" (back to the index), or
                # the view is refused before the object is looked up at all.
                assert (response.status_code, response.get("Location")) in {(302, "/admin/"), (403, None)}, (
                    name,
                    view,
                )
                assert their_marker.encode() not in response.content, (name, view)
            client.post(reverse(f"admin:{name}_delete", args=[obj.pk]), {"post": "yes"})
            assert model._default_manager.filter(pk=obj.pk).exists(), name


def test_searching_an_admin_list_never_finds_another_tenants_rows(admin_user, two_populated_tenants):
    _, _, their_marker = two_populated_tenants
    client = admin_client(admin_user)
    for model, model_admin in scoped_models():
        if not model_admin.search_fields:
            continue
        name = f"{model._meta.app_label}_{model._meta.model_name}"
        found = client.get(reverse(f"admin:{name}_changelist"), {"q": their_marker})
        assert found.status_code == 200 and found.context["cl"].result_count == 0, name


def test_a_tenant_admin_cannot_reach_the_tenants_list(admin_user):
    assert admin_client(admin_user).get("/admin/tenancy/tenant/").status_code == 403


def test_the_header_names_the_product_and_the_tenants_branding(admin_user, tenant):
    tenant.branding.company_name = "Acme Insurance"
    tenant.branding.colors = {"primary": "#123456"}
    tenant.branding.save()
    page = admin_client(admin_user).get("/admin/")
    assert b"Django administration" not in page.content
    assert b"Acme Insurance \xc2\xb7 Case Management" in page.content
    assert b"--primary: #123456;" in page.content
