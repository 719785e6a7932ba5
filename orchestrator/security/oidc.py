"""OIDC login (mozilla-django-oidc), wired only when ORCH_OIDC_RP_CLIENT_ID is set.

After the login flow the Django session cookie authenticates API calls like an admin-site login.
The role comes from a claim (ORCH_OIDC_ROLE_CLAIM; a string or a list such as groups) and is kept on
the user as Django's flags: admin = superuser, operator = staff, viewer = neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from orchestrator.security.principals import ROLES

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def role_from_claims(claims: dict[str, Any]) -> str:
    value = claims.get(settings.OIDC_ROLE_CLAIM)
    values = value if isinstance(value, list) else [value]
    granted = [v for v in values if v in ROLES]
    if not granted:
        return settings.OIDC_DEFAULT_ROLE
    return max(granted, key=ROLES.index)


class RoleMappingOIDCBackend(OIDCAuthenticationBackend):
    def create_user(self, claims: dict[str, Any]) -> User:
        return self._apply_role(super().create_user(claims), claims)

    def update_user(self, user: User, claims: dict[str, Any]) -> User:
        return self._apply_role(user, claims)

    def _apply_role(self, user: User, claims: dict[str, Any]) -> User:
        role = role_from_claims(claims)
        user.is_superuser = role == "admin"
        user.is_staff = role in ("admin", "operator")
        user.save(update_fields=["is_superuser", "is_staff"])
        return user
