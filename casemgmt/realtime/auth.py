"""WebSocket authentication: a one-use ticket in `?ticket=` (from `POST /ws/ticket`), or a JWT in
`?token=` or in `Authorization: Bearer`."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from django.contrib.auth.models import AnonymousUser

from casemgmt.accounts.authentication import authenticate_token
from casemgmt.accounts.models import User
from casemgmt.realtime.tickets import ticket_redeem
from shared.api.errors import NotAuthenticated
from shared.auth.tokens import bearer_token


def _credential_from_scope(scope: dict[str, Any]) -> str | None:
    """The credential the connection presents. A ticket stands for the credential that asked for
    it; one that is unknown, used or expired presents none (no fallback to another parameter)."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    if "ticket" in query:
        return ticket_redeem(query["ticket"][0])
    if query.get("token"):
        return query["token"][0]
    headers = dict(scope.get("headers") or [])
    return bearer_token(headers.get(b"authorization", b"").decode("latin-1"))


def resolve_sync(raw: str) -> User | AnonymousUser:
    """The principal the credential stands for now (fresh is_active, roles, token generation,
    expiry and revocation), or AnonymousUser when it no longer authenticates."""
    try:
        user, _claims = authenticate_token(raw)
    except NotAuthenticated:
        return AnonymousUser()
    user.get_permission_strings()  # evaluate here, in the sync thread
    return user


def _authenticate_sync(scope: dict[str, Any]) -> tuple[User | AnonymousUser, str | None]:
    raw = _credential_from_scope(scope)
    return (resolve_sync(raw) if raw else AnonymousUser()), raw


_authenticate = database_sync_to_async(_authenticate_sync)


class JWTAuthMiddleware:
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        user, raw = await _authenticate(scope)
        # The raw credential stays with the connection so the consumer can re-check it while the
        # socket is open (a disable, logout or role change must reach sockets already connected).
        scope = dict(scope, user=user, token=raw)
        return await self.inner(scope, receive, send)
