"""Who is calling, and with which role (viewer < operator < admin)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.utils import timezone

from orchestrator.security.models import ApiKey
from shared.api import errors
from shared.auth import apikeys, tokens

if TYPE_CHECKING:
    from django.contrib.auth.models import User

ROLES = ("viewer", "operator", "admin")
API_KEY_LABEL = "ork"


@dataclass
class Principal:
    name: str
    role: str
    kind: str  # "api_key", "jwt" or "session"
    is_authenticated: bool = True
    is_active: bool = True

    def has_role(self, needed: str) -> bool:
        return ROLES.index(self.role) >= ROLES.index(needed)


def jwt_config() -> tokens.JWTConfig:
    conf = settings.JWT
    return tokens.JWTConfig(
        signing_key=conf["SIGNING_KEY"],
        verifying_key=conf["VERIFYING_KEY"],
        algorithm=conf["ALGORITHM"],
        issuer=conf["ISSUER"],
        audience=conf["AUDIENCE"],
        lifetime=conf["LIFETIME"],
    )


def principal_from_api_key(raw: str) -> Principal:
    key = ApiKey.objects.filter(key_hash=apikeys.hash_key(raw), revoked_at__isnull=True).first()
    if key is None:
        raise errors.NotAuthenticated("API key is invalid or revoked.")
    ApiKey.objects.filter(pk=key.pk).update(last_used_at=timezone.now())
    return Principal(name=key.name, role=key.role, kind="api_key")


def principal_from_jwt(raw: str) -> Principal:
    claims = tokens.verify(jwt_config(), raw)
    role = claims.get(settings.JWT["ROLE_CLAIM"])
    if role not in ROLES:
        raise errors.PermissionDenied("Token carries no orchestrator role.")
    return Principal(name=str(claims["sub"]), role=role, kind="jwt")


def principal_from_session_user(user: User) -> Principal:
    role = "admin" if user.is_superuser else ("operator" if user.is_staff else "viewer")
    return Principal(name=user.get_username(), role=role, kind="session")


def actor_name(user: object) -> str:
    """The audit actor for a request's user: an API key's name, a token's subject or a session
    user's username; "anonymous" when security is switched off and nobody signed in."""
    if isinstance(user, Principal):
        return user.name
    if getattr(user, "is_authenticated", False):
        return str(user.get_username())  # type: ignore[attr-defined]
    return "anonymous"
