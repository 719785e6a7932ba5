"""Writes to a tenant's branding, terminology, themes and settings (a new tenant is made by
`casemgmt.accounts.tenants.tenant_create`, which also seeds its roles and first Admin).

Lock order (the case service's, everywhere): the tenant row first, then per-tenant name locks and
counters (case-type prefixes and numbers), then a case row, then its step rows, then any other row
the write changes, and the tenant's audit chain lock last, taken by the audit append just before
the transaction ends. The tenant row is locked FOR NO KEY UPDATE (`no_key=True`): every insert of a
row naming the tenant, the audit row included, checks the foreign key with FOR KEY SHARE on it,
which a plain FOR UPDATE would block. A settings write holding FOR UPDATE while it waited for the
chain, and an append holding the chain while its check waited for the tenant row, deadlocked.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from casemgmt.tenancy.changes import Actor, record
from casemgmt.tenancy.models import DEFAULT_TERMINOLOGY, Branding, Tenant, Terminology, Theme
from shared.api import errors

# --- tenant settings ------------------------------------------------------------------------------


def _actor(user: Actor) -> str:
    return str(user.id)


def _branding_audit_form(branding: Branding) -> dict[str, Any]:
    # The API's names (organizationName, logoUrl, primary/secondaryColor) plus what only Django
    # admin edits, so admin edits are audited too.
    extra_colors = {
        f"colors.{key}": value
        for key, value in branding.colors.items()
        if key not in ("primary", "secondary")
    }
    return {
        "organizationName": branding.company_name,
        "logoUrl": branding.logo_url or None,
        "primaryColor": branding.colors.get("primary"),
        "secondaryColor": branding.colors.get("secondary"),
        "faviconUrl": branding.favicon_url or None,
        "poweredBy": branding.powered_by or None,
        **extra_colors,
    }


@transaction.atomic
def branding_update(
    *, tenant: Tenant, actor: Actor, changes: dict[str, Any], replace_colors: bool = False
) -> Branding:
    """`changes` is in the stored form: company_name, logo_url, favicon_url, powered_by, colors
    (merged into the stored colours, or replacing them with `replace_colors`)."""
    branding = Branding.objects.select_for_update().get(tenant=tenant)
    before = _branding_audit_form(branding)
    for name in ("company_name", "logo_url", "favicon_url", "powered_by"):
        if name in changes:
            setattr(branding, name, changes[name])
    if replace_colors:
        branding.colors = dict(changes.get("colors", {}))
    else:
        branding.colors = {**branding.colors, **changes.get("colors", {})}
    branding.save()
    after = _branding_audit_form(branding)
    diff = {
        key: {"from": before.get(key), "to": after.get(key)}
        for key in {**before, **after}
        if before.get(key) != after.get(key)
    }
    if diff:
        record(
            tenant_id=tenant.id,
            actor=_actor(actor),
            action="tenant:branding_changed",
            resource=f"tenants/{tenant.id}/branding",
            changes=diff,
        )
    return branding


@transaction.atomic
def terminology_replace(*, tenant: Tenant, actor: Actor, labels: dict[str, str]) -> Terminology:
    terminology = Terminology.objects.select_for_update().get(tenant=tenant)
    before = dict(terminology.labels)
    terminology.labels = {key: labels[key] for key in DEFAULT_TERMINOLOGY}
    terminology.save()
    diff = {k: {"from": before.get(k), "to": v} for k, v in terminology.labels.items() if before.get(k) != v}
    if diff:
        record(
            tenant_id=tenant.id,
            actor=_actor(actor),
            action="tenant:terminology_changed",
            resource=f"tenants/{tenant.id}/terminology",
            changes=diff,
        )
    return terminology


def _theme_audit(theme: Theme, actor: Actor, operation: str, **changes: Any) -> None:
    record(
        tenant_id=theme.tenant_id,
        actor=_actor(actor),
        action="tenant:theme_changed",
        resource=f"themes/{theme.id}",
        changes={"operation": operation, "name": theme.name, **changes},
    )


def _lock_tenant(tenant: Tenant) -> Tenant:
    # NO KEY: foreign-key checks of concurrent inserts (audit appends among them) pass it.
    return Tenant.objects.select_for_update(no_key=True).get(pk=tenant.pk)


def _lock_themes(tenant: Tenant) -> None:
    # Serializes default switching per tenant (the partial unique index allows one default).
    _lock_tenant(tenant)


def _ensure_unique_name(tenant: Tenant, name: str, exclude: Any = None) -> None:
    if Theme.objects.filter(tenant=tenant, name=name).exclude(pk=exclude).exists():
        raise errors.AlreadyExists(f"A theme named {name!r} already exists.", field="name")


@transaction.atomic
def theme_create(
    *, tenant: Tenant, actor: Actor, name: str, css_variables: dict[str, str], is_default: bool = False
) -> Theme:
    _lock_themes(tenant)
    _ensure_unique_name(tenant, name)
    if is_default:
        # Setting one theme as default unsets the others.
        Theme.objects.filter(tenant=tenant, is_default=True).update(is_default=False)
    theme = Theme.objects.create(tenant=tenant, name=name, css_variables=css_variables, is_default=is_default)
    _theme_audit(theme, actor, "created", isDefault=is_default, cssVariables=css_variables)
    return theme


@transaction.atomic
def theme_update(
    *, theme: Theme, actor: Actor, name: str, css_variables: dict[str, str], is_default: bool | None = None
) -> Theme:
    _lock_themes(theme.tenant)
    theme = Theme.objects.get(pk=theme.pk)
    _ensure_unique_name(theme.tenant, name, exclude=theme.pk)
    if is_default is False and theme.is_default:
        # Every tenant keeps exactly one default theme: another one must be made default instead.
        raise errors.InvalidState(
            "This is the default theme; make another theme the default instead.", field="isDefault"
        )
    if is_default and not theme.is_default:
        Theme.objects.filter(tenant=theme.tenant, is_default=True).update(is_default=False)
        theme.is_default = True
    previous_name = theme.name
    theme.name, theme.css_variables = name, css_variables
    theme.save()
    _theme_audit(
        theme,
        actor,
        "updated",
        previousName=previous_name,
        isDefault=theme.is_default,
        cssVariables=css_variables,
    )
    return theme


@transaction.atomic
def theme_delete(*, theme: Theme, actor: Actor) -> None:
    _lock_themes(theme.tenant)
    theme = Theme.objects.get(pk=theme.pk)
    if theme.is_default:
        # Deleting the default theme is 409 invalid_state.
        raise errors.InvalidState("The default theme cannot be deleted.")
    _theme_audit(theme, actor, "deleted")
    theme.delete()


@transaction.atomic
def tenant_settings_update(*, tenant: Tenant, actor: Any, default_sla_hours: int | None) -> Tenant:
    """`default_sla_hours` None falls back to the service default; the change is audited."""
    tenant = _lock_tenant(tenant)
    before = tenant.default_sla_hours
    if before != default_sla_hours:
        tenant.default_sla_hours = default_sla_hours
        tenant.save(update_fields=["default_sla_hours"])
        record(
            tenant_id=tenant.id,
            actor=_actor(actor),
            action="tenant:settings_changed",
            resource=f"tenants/{tenant.id}/settings",
            changes={"defaultSlaHours": {"from": before, "to": default_sla_hours}},
        )
    return tenant
