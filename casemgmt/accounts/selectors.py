"""Reads for principals, roles and preferences, always scoped to one tenant."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from django.db.models import Q, QuerySet

from casemgmt.accounts.models import Role, Team, TeamMembership, User
from casemgmt.tenancy.models import Theme
from shared.api import errors
from shared.api.pagination import Page
from shared.api.time import iso

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


def locale_of(user: User) -> tuple[str | None, str | None]:
    """The language and time zone the user chose (None where they have not): the browser's
    language applies until they choose one."""
    stored = user.preferences or {}
    return stored.get("language"), stored.get("timezone")


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


# --- teams and out of office -------------------------------------------------------------------


def team_list(*, tenant_id: UUID, page: Page) -> tuple[list[Team], int]:
    queryset = Team.objects.filter(tenant_id=tenant_id).order_by("name", "id")
    total = queryset.count()
    rows = queryset.prefetch_related("memberships__user")[page.offset : page.offset + page.limit]
    return list(rows), total


def team_get(*, tenant_id: UUID, team_id: Any) -> Team:
    # Another tenant's team is reported as missing, like any other resource of another tenant.
    team = Team.objects.filter(tenant_id=tenant_id, pk=team_id).prefetch_related("memberships__user").first()
    if team is None:
        raise errors.NotFound("Team not found.")
    return team


def team_resolve(*, tenant_id: UUID, ref: str) -> Team | None:
    """A task step's `team`: a team id, else a team name, of the tenant."""
    try:
        by_id = Team.objects.filter(tenant_id=tenant_id, pk=UUID(ref)).first()
    except ValueError:
        by_id = None
    return by_id or Team.objects.filter(tenant_id=tenant_id, name=ref).first()


def teams_of(user: User) -> list[TeamMembership]:
    return list(TeamMembership.objects.filter(user=user).select_related("team").order_by("team__name"))


def team_ids_of(user: User) -> list[UUID]:
    """The user's team ids, read once per user object (a request's principal, a bulk's target)."""
    cached: list[UUID] | None = getattr(user, "_team_ids", None)
    if cached is None:
        cached = list(TeamMembership.objects.filter(user=user).values_list("team_id", flat=True))
        user._team_ids = cached
    return cached


def is_away(user: User, at: datetime) -> bool:
    """Out of office at `at`: from `away_from` (inclusive) until `away_until` (exclusive)."""
    return bool(user.away_from and user.away_until and user.away_from <= at < user.away_until)


def out_of_office_of(user: User, at: datetime) -> dict[str, Any] | None:
    if user.away_from is None or user.away_until is None:
        return None
    return {
        "from": iso(user.away_from),
        "until": iso(user.away_until),
        "delegateTo": str(user.away_delegate_id) if user.away_delegate_id else None,
        "active": is_away(user, at),
    }
