"""Emitting events into the outbox. Call inside the transaction that changes the state."""

from __future__ import annotations

from typing import Any

from orchestrator.events.models import Event
from shared.api.time import now_ms


def event_emit(*, type: str, data: dict[str, Any]) -> Event:
    """`data` is the spec payload's data object: run_id, dag_id, task_id, task_run_id, status,
    start_time, end_time, duration_seconds (agent events carry agent fields instead)."""
    return Event.objects.create(
        type=type,
        occurred_at=now_ms(),
        run_id=data.get("run_id") or "",
        dag_id=data.get("dag_id") or "",
        task_id=data.get("task_id") or "",
        data=data,
    )
