"""Streaming audit exports that really stream under both WSGI and ASGI.

Django's ASGI handler buffers a synchronous streaming iterator whole before sending it, so under
ASGI (daphne, uvicorn) the export is an asynchronous generator that fetches the events in keyset
pages (`sequence > last`) through `sync_to_async`; under WSGI the shared synchronous generators are used.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.db.models import QuerySet
from django.http import HttpRequest, StreamingHttpResponse

from shared.audit.services import event_to_dict, export_csv, export_json

CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "json": "application/json"}
CHUNK = 1000


def _fetch(events: QuerySet) -> list[Any]:
    return list(events)


async def _pages(events: QuerySet) -> AsyncIterator[list[Any]]:
    last: int | None = None
    while True:
        page = events.filter(sequence__gt=last) if last is not None else events
        rows: list[Any] = await sync_to_async(_fetch)(page.order_by("sequence")[:CHUNK])
        if not rows:
            return
        yield rows
        last = rows[-1].sequence


async def _csv_async(events: QuerySet) -> AsyncIterator[str]:
    header_sent = False
    async for rows in _pages(events):
        chunks = list(export_csv(rows))
        yield "".join(chunks if not header_sent else chunks[1:])
        header_sent = True
    if not header_sent:
        yield next(export_csv([]))


async def _json_async(events: QuerySet) -> AsyncIterator[str]:
    yield "["
    first = True
    async for rows in _pages(events):
        parts = [json.dumps(event_to_dict(e)) for e in rows]
        yield ("" if first else ",") + ",".join(parts)
        first = False
    yield "]"


def export_response(request: HttpRequest, events: QuerySet, fmt: str, filename: str) -> StreamingHttpResponse:
    content: Iterator[str] | AsyncIterator[str]
    if isinstance(request, ASGIRequest):
        content = _csv_async(events) if fmt == "csv" else _json_async(events)
    else:
        content = export_csv(events) if fmt == "csv" else export_json(events)
    response = StreamingHttpResponse(content, content_type=CONTENT_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="{filename}.{fmt}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
