"""Django admin at /admin/: tenant administrators see only their own tenant's rows."""

import pytest
from django.test import Client

from casemgmt.accounts.models import Role, User
from casemgmt.tenancy.models import Theme
from tests.casemgmt.conftest import PASSWORD

CHANGELISTS = {
    "accounts/user": lambda t: User.objects.filter(tenant=t).first().email,
    "accounts/role": lambda t: Role.objects.get(tenant=t, name="workflow_designer").display_name,
    "tenancy/theme": lambda t: Theme.objects.get(tenant=t, name="Dark").name,
}


def browser(user) -> Client:
    client = Client()
    assert client.login(email=user.email, password=PASSWORD)
    return client


@pytest.fixture
def tenant_admin(admin_user):
    return admin_user  # the first Admin of a tenant is staff (created by tenant_create)


def test_first_admin_is_staff_and_reaches_the_admin(tenant_admin):
    assert tenant_admin.is_staff and not tenant_admin.is_superuser
    response = browser(tenant_admin).get("/admin/")
    assert response.status_code == 200
    assert b"Users" in response.content and b"Themes" in response.content
    assert b"Tenants" not in response.content  # tenants themselves are for superusers


def test_tenant_admin_sees_only_own_rows(tenant_admin, tenant, other_tenant):
    client = browser(tenant_admin)
    for path in (
        "accounts/user",
        "accounts/role",
        "tenancy/theme",
        "tenancy/branding",
        "tenancy/terminology",
    ):
        response = client.get(f"/admin/{path}/")
        assert response.status_code == 200, path
        assert response.context["cl"].result_count == response.context["cl"].queryset.count()
        assert all(obj.tenant_id == tenant.id for obj in response.context["cl"].queryset), path
    users = client.get("/admin/accounts/user/")
    other_admin = User.objects.get(tenant=other_tenant, roles__name="admin")
    assert other_admin.email.encode() not in users.content
    assert tenant_admin.email.encode() in users.content


def test_tenant_admin_cannot_open_another_tenants_objects(tenant_admin, other_tenant):
    client = browser(tenant_admin)
    foreign_theme = Theme.objects.get(tenant=other_tenant, name="Dark")
    foreign_user = User.objects.filter(tenant=other_tenant).first()
    for url in (
        f"/admin/tenancy/theme/{foreign_theme.pk}/change/",
        f"/admin/accounts/user/{foreign_user.pk}/change/",
    ):
        response = client.get(url)
        # Django admin redirects to the index with "doesn't exist" for objects outside the queryset.
        assert response.status_code == 302 and response["Location"] == "/admin/", url
    response = client.post(f"/admin/tenancy/theme/{foreign_theme.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert Theme.objects.filter(pk=foreign_theme.pk).exists()


def test_tenant_admin_role_choices_and_new_rows_stay_in_tenant(tenant_admin, tenant, other_tenant):
    client = browser(tenant_admin)
    form = client.get("/admin/accounts/user/add/").context["adminform"].form
    assert set(form.fields["roles"].queryset) == set(Role.objects.filter(tenant=tenant))
    assert "tenant" not in form.fields and "is_superuser" not in form.fields
    response = client.post(
        "/admin/tenancy/theme/add/", {"name": "Admin Made", "css_variables": '{"--a": "b"}'}
    )
    assert response.status_code == 302, response.content
    assert Theme.objects.get(name="Admin Made").tenant_id == tenant.id


def test_staff_without_admin_permissions_sees_nothing(make_user, tenant):
    staff = make_user(tenant, roles=["viewer"], is_staff=True)
    client = browser(staff)
    assert client.get("/admin/accounts/user/").status_code == 403
    assert client.get("/admin/tenancy/theme/").status_code == 403


def test_non_staff_is_sent_to_login(make_user, tenant):
    user = make_user(tenant, roles=["admin"])
    response = browser(user).get("/admin/accounts/user/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_superuser_sees_every_tenant(tenant, other_tenant):
    root = User.objects.create_superuser("root-admin@platform.test", PASSWORD)
    client = browser(root)
    themes = client.get("/admin/tenancy/theme/").context["cl"].queryset
    assert {tenant.id, other_tenant.id} <= {t.tenant_id for t in themes}
    assert client.get("/admin/tenancy/tenant/").status_code == 200


def test_user_added_in_admin_is_audited_and_welcomed(
    tenant_admin, tenant, django_capture_on_commit_callbacks
):
    from django.core import mail

    from casemgmt.audit.models import AuditEvent

    viewer_role = Role.objects.get(tenant=tenant, name="viewer")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = browser(tenant_admin).post(
            "/admin/accounts/user/add/",
            {
                "email": "Added@Example.test",
                "display_name": "Added",
                "kind": "human",
                "roles": [str(viewer_role.pk)],
                "is_active": "on",
            },
        )
    assert response.status_code == 302, response.content
    added = User.objects.get(email="added@example.test")
    assert added.tenant_id == tenant.id and not added.has_usable_password() and added.role_names == ["viewer"]
    event = AuditEvent.objects.get(tenant=tenant, action="user:created", resource=f"principals/{added.id}")
    assert event.actor == str(tenant_admin.id) and event.changes["roles"] == ["viewer"]
    assert len(callbacks) == 1
    from casemgmt.accounts.tasks import send_welcome_email

    send_welcome_email.apply(args=[str(added.id)])
    assert "/console/password/set?token=" in mail.outbox[0].body
