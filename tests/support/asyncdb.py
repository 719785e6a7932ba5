"""Helpers for async tests (WebSocket clients) that also touch the database."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from django.db import connection


async def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Runs blocking Django code in a thread, closing that thread's DB connection afterwards (an
    open one would keep the test database from being dropped at the end of the session)."""

    def run() -> Any:
        try:
            return fn(*args, **kwargs)
        finally:
            connection.close()

    return await asyncio.to_thread(run)


async def receive_json(ws: Any, timeout: float = 10) -> Any:
    return json.loads(await asyncio.wait_for(ws.recv(), timeout=timeout))
