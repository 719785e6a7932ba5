"""Reads for principals, roles and preferences, always scoped to one tenant."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.db.models import Q, QuerySet

from casemgmt.accounts.models import Role, User
from casemgmt.tenancy.models import Theme
from shared.api import errors
from shared.api.pagination import Page

# Preference defaults (theme: the tenant's default theme).
PREFERENCE_DEFAULTS: dict[str, Any] = {
    "language": "en",
    "timezone": "UTC",
    "itemsPerPage": 25,
    "emailNotifications": True,
}


def preferences_of(user: User) -> dict[str, Any]:
    # Platform operators (no tenant) have no themes.
    tenant_themes = Theme.objects.filter(tenant_id=user.tenant_id) if user.tenant_id else Theme.objects.none()
    themes = dict(tenant_themes.values_list("name", "is_default"))
    default_theme = next((name for name, is_default in themes.items() if is_default), None)
    stored = user.preferences or {}
    merged = {"theme": default_theme, **PREFERENCE_DEFAULTS, **stored}
    # A theme deleted or renamed since it was chosen falls back to the tenant default.
    if merged["theme"] not in themes:
        merged["theme"] = default_theme
    return {
        key: merged[key] for key in ("theme", "language", "timezone", "itemsPerPage", "emailNotifications")
    }


def principals(tenant_id: UUID) -> QuerySet[User]:
    return User.objects.filter(tenant_id=tenant_id).prefetch_related("roles")


def principal_get(*, tenant_id: UUID, principal_id: UUID) -> User:
    # Another tenant's principal is reported as missing (existence is never leaked across tenants).
    user = principals(tenant_id).filter(pk=principal_id).first()
    if user is None:
        raise errors.NotFound("Principal not found.")
    return user


def principal_list(
    *, tenant_id: UUID, page: Page, search: str | None = None, role: str | None = None
) -> tuple[list[User], int]:
    queryset = principals(tenant_id)
    if search:
        queryset = queryset.filter(Q(email__icontains=search) | Q(display_name__icontains=search))
    if role:
        queryset = queryset.filter(roles__name=role)
    queryset = queryset.distinct().order_by("-created_at", "-id")  # newest first; id keeps ties stable
    total = queryset.count()
    return list(queryset[page.offset : page.offset + page.limit]), total


def role_list(*, tenant_id: UUID) -> QuerySet[Role]:
    return Role.objects.filter(tenant_id=tenant_id).order_by("-created_at", "-id")  # newest first


def role_get(*, tenant_id: UUID, role_id: UUID) -> Role:
    role = Role.objects.filter(tenant_id=tenant_id, pk=role_id).first()
    if role is None:
        raise errors.NotFound("Role not found.")
    return role


def display_names(*, tenant_id: UUID, ids: Any) -> dict[str, str]:
    """Principal id (as text) -> the name people know them by (display name, else email), for the
    ids that are principals of the tenant; other actors (system, a connector) are left out."""
    wanted = set()
    for raw in ids:
        try:
            wanted.add(UUID(str(raw)))
        except ValueError:
            continue
    rows = User.objects.filter(tenant_id=tenant_id, pk__in=wanted).values_list("id", "display_name", "email")
    return {str(pk): name or email for pk, name, email in rows}


def assignable_users(*, tenant_id: UUID, role: str = "") -> QuerySet[User]:
    """Active human principals a task can go to (holders of `role`, when the task names one)."""
    users = User.objects.filter(tenant_id=tenant_id, is_active=True, kind="human")
    if role:
        users = users.filter(roles__name=role)
    return users.distinct().order_by("display_name", "email")
