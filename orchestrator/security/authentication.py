"""Orchestrator authentication: X-API-Key, Bearer JWT or the Django session.

Only consulted when ORCH_SECURITY_ENABLED is on (see permissions.RolePermission).
"""

from __future__ import annotations

from typing import Any

from rest_framework.authentication import BaseAuthentication, SessionAuthentication

from orchestrator.security.principals import principal_from_api_key, principal_from_jwt
from shared.api import errors
from shared.auth.tokens import bearer_token


class OrchestratorAuthentication(BaseAuthentication):
    def authenticate(self, request: Any) -> tuple[Any, Any] | None:
        api_key = request.META.get("HTTP_X_API_KEY")
        if api_key:
            return principal_from_api_key(api_key), None
        header = request.META.get("HTTP_AUTHORIZATION")
        if header:
            raw = bearer_token(header)
            if raw is None:
                raise errors.NotAuthenticated("Authorization header must be 'Bearer <token>'.")
            return principal_from_jwt(raw), None
        session = SessionAuthentication().authenticate(request)
        return session

    def authenticate_header(self, request: Any) -> str:
        return 'Bearer realm="orchestrator"'
