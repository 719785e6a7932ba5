import io
import uuid

import pytest
from django.core.management import CommandError, call_command

from casemgmt.accounts.models import Role, User
from casemgmt.tenancy.models import Tenant, Theme
from tests.casemgmt.conftest import PASSWORD


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("create_tenant", *args, stdout=out)
    return out.getvalue()


def test_create_tenant_seeds_everything(db):
    name, email = f"Initech {uuid.uuid4().hex[:6]}", f"boss-{uuid.uuid4().hex[:6]}@initech.test"
    assert "Created tenant" in run("--name", name, "--admin-email", email, "--admin-password", PASSWORD)
    tenant = Tenant.objects.get(name=name)
    assert set(Role.objects.filter(tenant=tenant).values_list("name", flat=True)) == {
        "admin",
        "workflow_designer",
        "case_worker",
        "viewer",
    }
    assert (
        Theme.objects.filter(tenant=tenant).count() == 4
        and Theme.objects.get(tenant=tenant, is_default=True).name == "Light"
    )
    assert tenant.branding.company_name == name and tenant.terminology.labels["inbox"] == "Inbox"
    admin = User.objects.get(email=email)
    assert admin.tenant_id == tenant.id and admin.role_names == ["admin"] and admin.check_password(PASSWORD)


@pytest.mark.parametrize("clash", ["name", "email"])
def test_existing_name_or_email_is_a_clear_error(tenant, admin_user, clash):
    name = tenant.name.upper() if clash == "name" else f"Fresh {uuid.uuid4().hex[:6]}"
    email = admin_user.email if clash == "email" else f"new-{uuid.uuid4().hex[:6]}@x.test"
    with pytest.raises(CommandError, match="already exists"):
        run("--name", name, "--admin-email", email, "--admin-password", PASSWORD)
    assert not Tenant.objects.filter(name=name).exclude(pk=tenant.pk).exists()


def test_weak_password_is_refused(db):
    with pytest.raises(CommandError):
        run(
            "--name", f"Weak {uuid.uuid4().hex[:6]}", "--admin-email", "w@x.test", "--admin-password", "short"
        )
    assert not User.objects.filter(email="w@x.test").exists()
