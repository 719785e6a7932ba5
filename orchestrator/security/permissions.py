"""Role matrix: viewer GET; operator also schedule, cancel, rerun; admin everything.

Views may set `min_role = {"POST": "operator"}`; otherwise GET/HEAD/OPTIONS need viewer and every
other method needs admin. Views with `public = True` (health) are always open.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from django.conf import settings
from rest_framework.permissions import BasePermission

from orchestrator.security.authentication import challenge
from orchestrator.security.principals import Principal, principal_from_session_user
from shared.api import errors

if TYPE_CHECKING:  # DRF imports this module while loading rest_framework.views (its settings)
    from django.contrib.auth.models import User
    from rest_framework.request import Request
    from rest_framework.views import APIView

SAFE = ("GET", "HEAD", "OPTIONS")


def needed_role(request: Request, view: APIView) -> str:
    declared = getattr(view, "min_role", {})
    if request.method in declared:
        return declared[request.method]
    return "viewer" if request.method in SAFE else "admin"


class RolePermission(BasePermission):
    def has_permission(self, request: Request, view: APIView) -> bool:
        if getattr(view, "public", False) or not settings.ORCH_SECURITY_ENABLED:
            return True
        if not hasattr(view, (request.method or "").lower()):
            return True  # decisions.md: a method the route lacks is 405, not 401/403
        # A token's Principal, a session's User, or AnonymousUser (DRF's type knows the last two only).
        principal: object = request.user
        if not getattr(principal, "is_authenticated", False):
            raise challenge(errors.NotAuthenticated())
        if not isinstance(principal, Principal):
            principal = principal_from_session_user(cast("User", principal))
        role = needed_role(request, view)
        if not principal.has_role(role):
            raise errors.PermissionDenied(f"Requires the {role} role.")
        return True
