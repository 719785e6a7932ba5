"""Bearer authentication for HTTP and WebSocket: a JWT from /auth/login or an agent API key."""

from __future__ import annotations

import copy
import threading
import time
from typing import Any

from rest_framework.authentication import BaseAuthentication

from casemgmt.accounts.models import User
from casemgmt.accounts.tokens import API_KEY_LABEL, jwt_config
from casemgmt.tenancy import rls
from shared.api import errors
from shared.auth import apikeys, tokens


def _active_user(**lookup: Any) -> User:
    user = User.objects.select_related("tenant").prefetch_related("roles").filter(**lookup).first()
    # A disabled user cannot authenticate, and tokens it already holds stop working.
    if user is None or not user.is_active or user.tenant_id is None:
        raise errors.NotAuthenticated("Credentials are invalid or the account is disabled.")
    return user


def authenticate_token(raw: str) -> tuple[User, dict[str, Any] | None]:
    """Returns the principal and, for JWTs, the verified claims (None for API keys)."""
    if apikeys.looks_like_key(raw, API_KEY_LABEL):
        return _active_user(api_key_hash=apikeys.hash_key(raw), kind=User.KIND_AGENT), None
    claims = tokens.verify(jwt_config(), raw)
    user = _active_user(id=claims["sub"])
    if str(user.tenant_id) != claims.get("tenant"):
        raise errors.NotAuthenticated("Token does not belong to this principal's tenant.")
    # decision: a password change or set revokes every token issued before it.
    if claims.get("gen", 0) != user.token_generation:
        raise errors.NotAuthenticated("Token was issued before the password changed; log in again.")
    return user, claims


# decision: HTTP requests reuse a credential's verified principal for at most
# PRINCIPAL_CACHE_SECONDS (1 s) inside one process, so a burst of calls with one token costs one
# JWT decode, revocation lookup and user + roles query instead of one per call. A logout, disable,
# password or role change made in this process forgets every entry at once; one made in another
# process reaches this one within the TTL. WebSocket re-checks always read fresh.
PRINCIPAL_CACHE_SECONDS = 1.0
_PRINCIPAL_CACHE_MAX = 10_000
_principals: dict[str, tuple[float, User, dict[str, Any] | None]] = {}
_principals_lock = threading.Lock()


def forget_cached_principals(**_signal: Any) -> None:
    """Drops every cached principal (also a signal receiver, hence the keyword arguments). An entry
    read just before a change commits lives at most the TTL, counted from its read."""
    with _principals_lock:
        _principals.clear()


def authenticate_token_cached(raw: str) -> tuple[User, dict[str, Any] | None]:
    now = time.monotonic()
    hit = _principals.get(raw)
    if hit is not None and hit[0] > now:
        # A copy per request: views may set attributes on request.user; the tenant is read lazily
        # from the database when a view needs more than its id, so it is never stale.
        return copy.copy(hit[1]), hit[2]
    user, claims = authenticate_token(raw)
    user.get_permission_strings()
    user.rls_teams  # noqa: B018 (read now, so cached copies carry their team ids too)
    cached = copy.copy(user)
    cached._state.fields_cache.pop("tenant", None)
    expires = now + PRINCIPAL_CACHE_SECONDS
    if claims is not None:  # never past the token's own expiry
        expires = min(expires, now + float(claims["exp"]) - time.time())
    with _principals_lock:
        if len(_principals) >= _PRINCIPAL_CACHE_MAX:
            _principals.clear()
        _principals[raw] = (expires, cached, claims)
    return user, claims


class BearerAuthentication(BaseAuthentication):
    def authenticate(self, request: Any) -> tuple[User, dict[str, Any] | None] | None:
        header = request.META.get("HTTP_AUTHORIZATION")
        if not header:
            return None
        raw = tokens.bearer_token(header)
        if raw is None:
            raise errors.NotAuthenticated("Authorization header must be 'Bearer <token>'.")
        user, claims = authenticate_token_cached(raw)
        # From here on the request's queries see only its tenant's rows (row-level security).
        rls.enter_tenant(user.member_tenant_id, user.rls_teams)
        return user, claims

    def authenticate_header(self, request: Any) -> str:
        return 'Bearer realm="casemgmt"'
