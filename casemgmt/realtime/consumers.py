"""`/ws`: one group per tenant; each message names the permission a reader needs."""

from __future__ import annotations

from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer

from casemgmt.realtime.events import tenant_group
from shared.auth.permissions import has_permission


class TenantEventsConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        self.user = user
        self.group = tenant_group(user.tenant_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def tenant_event(self, event: dict[str, Any]) -> None:
        # CONTRACT: a client receives only messages about resources it may read.
        permission = event.get("permission")
        if permission and not has_permission(self.user.get_permission_strings(), permission):
            return
        only_user = event.get("only_user")
        if only_user and only_user != str(self.user.id):
            return
        await self.send_json(event["message"])

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "ping":
            await self.send_json({"type": "pong"})
