"""The outbox rows the webhook work reads: one per state change, in the changing transaction."""

from __future__ import annotations

import pytest

from orchestrator.events.models import Event
from tests.orchestrator.helpers import put_task

pytestmark = pytest.mark.django_db

DATA_KEYS = {
    "run_id",
    "dag_id",
    "task_id",
    "task_run_id",
    "status",
    "start_time",
    "end_time",
    "duration_seconds",
}


def test_schedule_and_cancel_emit_dag_and_task_events_in_order(api):
    put_task(api, "e1")
    put_task(api, "e2", dependencies=["e1"])
    body = api.post("/api/schedule-task", {"task_id": "e2", "run_id": "ev-run"}, format="json").json()
    api.post(f"/api/cancel-run/{body['run_id']}")
    events = list(Event.objects.filter(run_id="ev-run"))
    assert [e.type for e in events] == [
        "dag.pending", "task.pending", "task.pending", "task.queued", "task.cancelled", "task.cancelled", "dag.cancelled",
    ]  # fmt: skip
    for event in events:
        assert set(event.data) == DATA_KEYS and event.data["run_id"] == "ev-run"
        assert event.data["dag_id"] is None and event.dag_id == ""  # schedule-task runs have no DAG
    dag_event = events[-1].data
    assert dag_event["task_id"] is None and dag_event["status"] == "cancelled"
    assert dag_event["end_time"].endswith("Z") and isinstance(dag_event["duration_seconds"], int)
    queued = next(e for e in events if e.type == "task.queued")
    assert queued.task_id == "e1" and queued.data["task_run_id"].startswith("e1_")


def test_nothing_is_emitted_when_a_schedule_is_refused(api):
    put_task(api, "e3")
    api.post("/api/schedule-task", {"task_id": "e3", "timeout_seconds": 0}, format="json")
    assert not Event.objects.exists()
