"""Orchestrator authentication: X-API-Key, Bearer JWT or the Django session.

Only consulted when ORCH_SECURITY_ENABLED is on (see permissions.RolePermission).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from rest_framework.authentication import BaseAuthentication, SessionAuthentication

from orchestrator.security.principals import Principal, principal_from_api_key, principal_from_jwt
from shared.api import errors
from shared.auth.tokens import bearer_token

if TYPE_CHECKING:  # DRF imports this module while loading its settings
    from django.contrib.auth.models import User
    from rest_framework.request import Request

CHALLENGE = 'Bearer realm="orchestrator"'


def challenge(exc: errors.NotAuthenticated) -> errors.NotAuthenticated:
    """RFC 7235: a 401 names the scheme the client should use."""
    exc.headers.setdefault("WWW-Authenticate", CHALLENGE)
    return exc


class OrchestratorAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[Principal | User, None] | None:
        if not settings.ORCH_SECURITY_ENABLED:
            return None  # security off: no credential is required, so a stale one must not turn into a 401
        try:
            return self._authenticate(request)
        except errors.NotAuthenticated as exc:
            raise challenge(exc) from None

    def _authenticate(self, request: Request) -> tuple[Principal | User, None] | None:
        # A present X-API-Key is the credential even when empty: an empty or wrong key is a 401,
        # never a fall-through to another credential the request may also carry.
        if "HTTP_X_API_KEY" in request.META:
            return principal_from_api_key(request.META["HTTP_X_API_KEY"]), None
        header = request.META.get("HTTP_AUTHORIZATION")
        if header:
            raw = bearer_token(header)
            if raw is None:
                raise errors.NotAuthenticated("Authorization header must be 'Bearer <token>'.")
            return principal_from_jwt(raw), None
        return SessionAuthentication().authenticate(request)

    def authenticate_header(self, request: Request) -> str:
        return CHALLENGE
