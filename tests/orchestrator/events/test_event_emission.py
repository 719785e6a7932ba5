"""The outbox rows the webhook work reads: one per state change, in the changing transaction."""

from __future__ import annotations

import pytest

from orchestrator.events.models import Event
from orchestrator.runs import executor
from orchestrator.runs.models import Run, TaskRun
from orchestrator.webhooks.models import Delivery
from orchestrator.webhooks.services import events_dispatch, webhook_create
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


def _run_a_chain_in_process(api, prefix: str) -> str:
    """A two-task chain run by the agent's own code in this process: scheduling (Python), the
    claims, the link's completion queueing its dependent and the leaf's completion (single SQL
    statements) all write events."""
    put_task(api, f"{prefix}1", "true", queue="in-process")
    put_task(api, f"{prefix}2", "true", dependencies=[f"{prefix}1"], queue="in-process")
    body = api.post("/api/schedule-task", {"task_id": f"{prefix}2"}, format="json").json()
    for task_id in (f"{prefix}1", f"{prefix}2"):
        tr = TaskRun.objects.get(run_id=body["run_id"], task_id=task_id)
        assert executor.execute(task_run_id=tr.id, attempt=tr.attempts, agent_id="test@local") == "completed"
    assert Run.objects.get(pk=body["run_id"]).status == "completed"
    return body["run_id"]


def test_events_no_registration_subscribes_to_are_written_dispatched(api):
    run_id = _run_a_chain_in_process(api, "nosub")
    events = list(Event.objects.filter(run_id=run_id))
    assert {e.type for e in events} == {
        "dag.pending", "dag.running", "dag.completed", "task.pending", "task.queued", "task.running", "task.completed",
    }  # fmt: skip
    assert all(e.dispatched_at == e.occurred_at for e in events), [(e.type, e.dispatched_at) for e in events]
    assert events_dispatch() == 0  # nothing left for the dispatcher to read


def test_subscribed_event_types_wait_for_the_dispatcher_and_reach_their_registration(api):
    webhook = webhook_create(
        name="completions", url="http://127.0.0.1:9/hook", events=["task.completed", "task.queued"],
        secret="s", headers={}, filters={},
    )  # fmt: skip
    run_id = _run_a_chain_in_process(api, "sub")
    events = list(Event.objects.filter(run_id=run_id))
    waiting = sorted(e.type for e in events if e.dispatched_at is None)
    # both completions (the link's in the statement that queues its dependent, the leaf's in its
    # own) and both queueings (the root's at scheduling, the dependent's by that statement)
    assert waiting == ["task.completed", "task.completed", "task.queued", "task.queued"]
    assert events_dispatch() == 4
    delivered = Delivery.objects.filter(webhook=webhook).select_related("event")
    assert sorted(d.event.type for d in delivered) == waiting
