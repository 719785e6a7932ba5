"""`/ws`: one group per tenant; each message names the permission a reader needs."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from casemgmt.realtime import visibility
from casemgmt.realtime.auth import resolve_sync
from casemgmt.realtime.events import tenant_group
from casemgmt.tenancy import rls
from shared.auth.permissions import has_permission
from shared.channel_layer import TRANSIENT, retrying
from shared.conf import CHANNEL_GROUP_RENEW_SECONDS

logger = logging.getLogger(__name__)

T = TypeVar("T")

# decision: the principal behind an open socket is re-checked before delivering a message, at most
# this many seconds after the previous check, so a disable, logout, password change, token expiry
# or role edit stops deliveries within that window without a database read per message.
RECHECK_SECONDS = float(getattr(settings, "WEBSOCKET_PRINCIPAL_RECHECK_SECONDS", 2.0))


def in_tenant_sync(tenant_id: Any, work: Callable[..., T], *args: Any) -> T:
    """Runs `work` in the socket's tenant context (row-level security): once the connection is
    authenticated, every query a consumer makes sees only its tenant's rows, whatever its filter.
    Only the authentication of the connection itself reads in the system context, as for HTTP."""
    with rls.tenant_session(tenant_id):
        return work(*args)


in_tenant = database_sync_to_async(in_tenant_sync)


class TenantEventsConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            # A missing, invalid, used or expired credential closes with 4401 (the 401 of
            # WebSockets). Accepted first: a close before the accept is the server's handshake
            # refusal (HTTP 403), and a browser sees neither that status nor any close code, so
            # it could not tell "sign in again" from "the network failed".
            await self.accept()
            await self.close(code=4401)
            return
        self.user = user
        self.checked_at = time.monotonic()
        self.group = tenant_group(user.tenant_id)
        await self._join()
        await self.accept()
        self.renewal: asyncio.Task[None] | None = asyncio.create_task(self._renew_membership())

    async def _join(self) -> None:
        await retrying(
            lambda: self.channel_layer.group_add(self.group, self.channel_name), what="WebSocket group join"
        )

    async def _renew_membership(self) -> None:
        """Memberships older than the layer's group expiry are dropped (so a channel whose removal
        never happened does not receive forever); an open socket renews its own well before that."""
        while True:
            await asyncio.sleep(CHANNEL_GROUP_RENEW_SECONDS)
            try:
                await self._join()
            except TRANSIENT:
                logger.warning("WebSocket group renewal failed; trying again at the next renewal")

    async def disconnect(self, code: int) -> None:
        renewal, self.renewal = getattr(self, "renewal", None), None
        if renewal is not None:
            renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewal
        if hasattr(self, "group"):
            group = self.group
            del self.group
            try:
                await retrying(
                    lambda: self.channel_layer.group_discard(group, self.channel_name),
                    what="WebSocket group leave",
                )
            except TRANSIENT:
                # Still in the group: broadcasts are written to a channel nobody reads (each
                # message expires unread) until the membership's age passes the group expiry.
                logger.warning("WebSocket group leave failed; the membership expires on its own")

    async def _current_user(self) -> Any | None:
        """The principal as it is now, or None (and the socket closed with 4401) when the token or
        the account no longer authenticates."""
        if time.monotonic() - self.checked_at < RECHECK_SECONDS:
            return self.user
        token = self.scope.get("token")
        user = await in_tenant(self.user.tenant_id, resolve_sync, token) if token else None
        if user is None or not user.is_authenticated or user.pk != self.user.pk:
            await self.disconnect(4401)
            await self.close(code=4401)
            return None
        self.user, self.checked_at = user, time.monotonic()
        return user

    async def tenant_event(self, event: dict[str, Any]) -> None:
        if not hasattr(self, "group"):
            return  # already closed for an invalid principal
        user = await self._current_user()
        if user is None:
            return
        # A client receives only messages about resources it may read.
        permission = event.get("permission")
        if permission and not has_permission(user.get_permission_strings(), permission):
            return
        only_user = event.get("only_user")
        if only_user and only_user != str(user.id):
            return
        if not await self._may_hear_case(user, event["message"].get("data")):
            return
        await self.send_json(event["message"])

    async def _may_hear_case(self, user: Any, data: Any) -> bool:
        """Messages about a case whose type names `accessTeams` reach only its teams' members and
        holders of admin:* (as the database shows the case itself). The case's access teams are
        read once per case and socket."""
        case_id = data.get("caseId") if isinstance(data, dict) else None
        if not isinstance(case_id, str):
            return True
        seen: dict[str, str | None] = self.__dict__.setdefault("case_access", {})
        if case_id not in seen:
            if len(seen) > 1000:
                seen.clear()
            seen[case_id] = await in_tenant(self.user.tenant_id, visibility.case_teams, case_id)
        teams = await in_tenant(self.user.tenant_id, lambda: user.rls_teams) if seen[case_id] else "*"
        return visibility.may_hear(teams, seen[case_id])

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "ping":
            await self.send_json({"type": "pong"})
