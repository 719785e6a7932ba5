"""Reads of a tenant's settings and recent activity."""

from __future__ import annotations

from uuid import UUID

from django.conf import settings

from casemgmt.tenancy.models import DEFAULT_TERMINOLOGY, Branding, Tenant, Terminology, Theme
from shared.api import errors


def branding_of(*, tenant_id: UUID) -> Branding:
    return Branding.objects.get(tenant_id=tenant_id)


def terminology_of(*, tenant_id: UUID) -> dict[str, str]:
    labels = Terminology.objects.filter(tenant_id=tenant_id).values_list("labels", flat=True).first() or {}
    return {key: labels.get(key, default) for key, default in DEFAULT_TERMINOLOGY.items()}


def tenant_settings_of(*, tenant_id: UUID) -> dict[str, int | None]:
    """`defaultSlaHours` is the tenant's own value (null: none); `serviceDefaultSlaHours` applies then."""
    own = Tenant.objects.filter(pk=tenant_id).values_list("default_sla_hours", flat=True).first()
    return {"defaultSlaHours": own, "serviceDefaultSlaHours": settings.CASE_DEFAULT_SLA_HOURS}


def default_sla_hours(*, tenant_id: UUID) -> int:
    """SLA hours of a new case whose case type and workflow set none: the tenant's, else the service's."""
    own = Tenant.objects.filter(pk=tenant_id).values_list("default_sla_hours", flat=True).first()
    return own or settings.CASE_DEFAULT_SLA_HOURS


def theme_list(*, tenant_id: UUID) -> list[Theme]:
    return list(Theme.objects.filter(tenant_id=tenant_id).order_by("-created_at", "-id"))  # newest first


def theme_get(*, tenant_id: UUID, theme_id: UUID) -> Theme:
    theme = Theme.objects.select_related("tenant").filter(tenant_id=tenant_id, pk=theme_id).first()
    if theme is None:
        raise errors.NotFound("Theme not found.")
    return theme


def manifest_tenant(*, tenant_id: str | None) -> Tenant | None:
    """Whose branding the public manifest shows: `?tenant=<id>`, else the only tenant when there is
    exactly one (single-tenant installs), else none (a generic manifest). Browsers fetch manifests
    without credentials, so the caller's token is not consulted."""
    if tenant_id:
        try:
            UUID(tenant_id)
        except ValueError:
            raise errors.NotFound("Tenant not found.") from None
        tenant = Tenant.objects.filter(pk=tenant_id).first()
        if tenant is None:
            raise errors.NotFound("Tenant not found.")
        return tenant
    first_two = list(Tenant.objects.order_by("created_at")[:2])
    return first_two[0] if len(first_two) == 1 else None


def manifest_branding(tenant: Tenant | None) -> tuple[Branding | None, Theme | None]:
    """The branding and the default theme the web-app manifest is built from (none without a tenant)."""
    if tenant is None:
        return None, None
    branding = Branding.objects.filter(tenant=tenant).first()
    return branding, Theme.objects.filter(tenant=tenant, is_default=True).first()
