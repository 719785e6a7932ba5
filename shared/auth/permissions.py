"""Permission strings with wildcards, and the DRF permission class views declare per operation.

Rules:
- `*` matches everything;
- `<prefix>:*` matches every permission starting with `<prefix>:` (and `<prefix>:*` itself);
- anything else matches only itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rest_framework.permissions import BasePermission

from shared.api import errors


def permission_matches(granted: str, required: str) -> bool:
    if granted == "*" or granted == required:
        return True
    if granted.endswith(":*"):
        return required.startswith(granted[:-1])
    return False


def has_permission(granted: Iterable[str], required: str) -> bool:
    return any(permission_matches(g, required) for g in granted)


def has_all(granted: Iterable[str], required: Iterable[str]) -> bool:
    granted = list(granted)
    return all(has_permission(granted, r) for r in required)


def is_valid_permission(value: str, known: Iterable[str]) -> bool:
    """A permission string is a known one or a wildcard over a known prefix."""
    known = set(known)
    if value == "*" or value in known:
        return True
    if value.endswith(":*"):
        prefix = value[:-1]
        return any(k.startswith(prefix) for k in known)
    return False


class RequiredPermission(BasePermission):
    """Views declare `required = {"GET": "cases:read", "POST": ("cases:read", "audit:read")}`.

    A method absent from `required` needs only authentication; `None` makes it public.
    The user object supplies its permissions through `get_permission_strings()`.
    """

    def has_permission(self, request: Any, view: Any) -> bool:
        if request.method.lower() not in view.http_method_names or not hasattr(view, request.method.lower()):
            return True  # let DRF answer 405 rather than 401/403 for a method the view lacks
        required = getattr(view, "required", {})
        needed = required.get(request.method, required.get("*", ""))
        if needed is None:
            return True
        user = request.user
        if not getattr(user, "is_authenticated", False):
            raise errors.NotAuthenticated()
        if not needed:
            return True
        needed = (needed,) if isinstance(needed, str) else needed
        if not has_all(user.get_permission_strings(), needed):
            raise errors.PermissionDenied(f"Requires permission {', '.join(needed)}.")
        return True
