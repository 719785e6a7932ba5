"""Tenant creation and seeding: the tenant row, its default themes, branding and terminology, its
default roles and its first Admin. It lives in accounts, not tenancy, because it writes roles and
users: tenancy is the lowest app and imports no other."""

from __future__ import annotations

from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction

from casemgmt.accounts.models import DEFAULT_ROLES, Role, User
from casemgmt.accounts.services import user_create
from casemgmt.tenancy.defaults import DEFAULT_COLORS, DEFAULT_THEMES
from casemgmt.tenancy.models import DEFAULT_TERMINOLOGY, Branding, Tenant, Terminology, Theme
from shared.api import errors


@transaction.atomic
def tenant_create(
    *, name: str, admin_email: str, admin_password: str, admin_display_name: str = ""
) -> Tenant:
    name = name.strip()
    if not name:
        raise errors.ValidationFailed("Tenant name must not be empty.", field="name")
    if Tenant.objects.filter(name__iexact=name).exists():
        raise errors.AlreadyExists(f"A tenant named {name!r} already exists.", field="name")
    if User.objects.filter(email=admin_email.strip().lower()).exists():
        raise errors.AlreadyExists(f"A user with email {admin_email} already exists.", field="adminEmail")
    try:
        validate_password(admin_password)
    except ValidationError as exc:
        raise errors.ValidationFailed.from_errors(
            [{"field": "adminPassword", "error": m} for m in exc.messages]
        ) from None

    tenant = Tenant.objects.create(name=name)
    roles = {
        key: Role.objects.create(tenant=tenant, name=key, display_name=display, permissions=perms)
        for key, (display, perms) in DEFAULT_ROLES.items()
    }
    for theme_name, is_default, variables in DEFAULT_THEMES:
        Theme.objects.create(tenant=tenant, name=theme_name, is_default=is_default, css_variables=variables)
    Branding.objects.create(tenant=tenant, company_name=name, colors=dict(DEFAULT_COLORS))
    Terminology.objects.create(tenant=tenant, labels=dict(DEFAULT_TERMINOLOGY))
    user_create(
        tenant=tenant,
        email=admin_email,
        display_name=admin_display_name or "Administrator",
        roles=[roles["admin"]],
        password=admin_password,
        # The first Admin is a tenant administrator in Django admin too (scoped to this tenant).
        is_staff=True,
    )
    return tenant
