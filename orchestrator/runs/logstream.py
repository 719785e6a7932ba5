"""Following a task run's output as it is written: server-sent events.

The agent flushes output lines to the database every ORCH_TASK_LOG_FLUSH_SECONDS; the stream polls
for lines after the last one it sent every ORCH_LOG_STREAM_POLL_SECONDS and sends each as one
event (`id` is the line's id, so a client reconnecting with `Last-Event-ID` resumes without gaps
or repeats). It ends with an `end` event (`{"status": ...}`) once the task run is finished and its
last lines are sent, or with `truncated` when the connection's byte cap is reached. Bytes per
second are capped by pausing, so a chatty task cannot flood a follower (or the server).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from django.conf import settings
from rest_framework.renderers import BaseRenderer

from orchestrator.runs.models import TaskLogLine, TaskRun

FINISHED = ("completed", "failed", "cancelled")
BATCH = 500
KEEPALIVE_SECONDS = 15.0


class EventStreamRenderer(BaseRenderer):
    """Lets a client ask for `Accept: text/event-stream`; errors before the stream starts are
    still the JSON error body."""

    media_type = "text/event-stream"
    format = "event-stream"

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        return json.dumps(data).encode()


@dataclass
class Limits:
    bytes_per_second: int
    max_bytes: int
    poll_seconds: float

    @classmethod
    def from_settings(cls) -> Limits:
        return cls(
            settings.LOG_STREAM_BYTES_PER_SECOND,
            settings.LOG_STREAM_MAX_BYTES,
            settings.LOG_STREAM_POLL_SECONDS,
        )


def _lines_after(task_run_id: str, after_id: int) -> tuple[list[tuple[int, str]], str]:
    """The next lines after `after_id` and the task run's status read before them: when that
    status is finished, no line can follow the ones returned."""
    status = TaskRun.objects.filter(pk=task_run_id).values_list("status", flat=True).first() or "cancelled"
    lines = TaskLogLine.objects.filter(task_run_id=task_run_id, id__gt=after_id).order_by("id")
    return list(lines.values_list("id", "line")[:BATCH]), status


def event(data: str, *, name: str = "", event_id: int | None = None) -> bytes:
    head = (f"event: {name}\n" if name else "") + (f"id: {event_id}\n" if event_id is not None else "")
    body = "".join(f"data: {part}\n" for part in data.split("\n"))
    return (head + body + "\n").encode()


class _Throttle:
    """At most `rate` bytes in any one-second window: waits for the window to pass."""

    def __init__(self, rate: int) -> None:
        self.rate, self.window_start, self.sent = rate, time.monotonic(), 0

    async def take(self, size: int) -> None:
        now = time.monotonic()
        if now - self.window_start >= 1:
            self.window_start, self.sent = now, 0
        if self.sent and self.sent + size > self.rate:
            await asyncio.sleep(max(0.0, 1 - (now - self.window_start)))
            self.window_start, self.sent = time.monotonic(), 0
        self.sent += size


async def follow(task_run_id: str, *, after_id: int, limits: Limits) -> AsyncIterator[bytes]:
    throttle, total, idle = _Throttle(limits.bytes_per_second), 0, 0.0
    fetch = sync_to_async(_lines_after, thread_sensitive=False)
    yield b": following\n\n"
    while True:
        lines, status = await fetch(task_run_id, after_id)
        for line_id, text in lines:
            chunk = event(text, event_id=line_id)
            if total + len(chunk) > limits.max_bytes:
                yield event(json.dumps({"sent_bytes": total, "next_id": after_id}), name="truncated")
                return
            await throttle.take(len(chunk))
            total, after_id = total + len(chunk), line_id
            yield chunk
        if len(lines) == BATCH:
            continue
        if status in FINISHED:
            yield event(json.dumps({"status": status}), name="end")
            return
        await asyncio.sleep(limits.poll_seconds)
        idle = 0.0 if lines else idle + limits.poll_seconds
        if idle >= KEEPALIVE_SECONDS:  # proxies drop silent connections
            idle = 0.0
            yield b": keepalive\n\n"
