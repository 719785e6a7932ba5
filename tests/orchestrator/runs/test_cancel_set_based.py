"""Cancelling a run is set-based (a few statements whatever its size) and leaves exactly what the
per-task-run loop it replaced left: the same statuses, end times, events and audit row."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from orchestrator.audit.models import AuditEvent
from orchestrator.events.models import Event
from orchestrator.runs import services
from orchestrator.runs.models import CANCELLED, COMPLETED, RUNNING, TERMINAL, Run, TaskRun
from orchestrator.runs.state import event_emit_run, run_lock, task_runs_set_status
from shared.api.time import now_ms
from tests.orchestrator.helpers import put_dag, put_task

pytestmark = pytest.mark.django_db


@pytest.fixture
def fan(api):
    """A root and `n` tasks after it, in a DAG: scheduled, its root queued and the rest pending."""
    put_task(api, "root")
    for n in range(6):
        put_task(api, f"leaf{n}", dependencies=["root"])
    put_dag(api, "fan", ["root", *(f"leaf{n}" for n in range(6))])

    def schedule(run_id: str) -> str:
        api.post("/api/schedule-dag", {"dag_id": "fan", "run_id": run_id}, format="json")
        # Every state a cancel meets: one completed, one running (started a minute ago), queued, pending.
        started = now_ms() - timedelta(minutes=1)
        TaskRun.objects.filter(run_id=run_id, task_id="root").update(
            status=COMPLETED, start_time=started, end_time=started
        )
        TaskRun.objects.filter(run_id=run_id, task_id="leaf0").update(
            status=RUNNING, start_time=started, attempts=1
        )
        TaskRun.objects.filter(run_id=run_id, task_id="leaf1").update(status="queued")
        Run.objects.filter(pk=run_id).update(status=RUNNING)
        return run_id

    return schedule


def _reference_cancel(run_id: str) -> None:
    """The loop the set-based cancel replaced: one conditional UPDATE and one event per task run."""
    with transaction.atomic():
        run, now = run_lock(run_id), now_ms()
        unfinished = list(TaskRun.objects.filter(run=run).exclude(status__in=TERMINAL).order_by("pk"))
        task_runs_set_status(unfinished, run, CANCELLED, end_time=now)
        Run.objects.filter(pk=run.pk).update(status=CANCELLED, end_time=now, cancel_force=False)
        run.status, run.end_time = CANCELLED, now
        event_emit_run(run)


def _outcome(run_id: str) -> dict:
    run = Run.objects.get(pk=run_id)
    task_runs = {
        tr.task_id: (
            tr.status,
            tr.end_time == run.end_time if tr.status == CANCELLED else tr.end_time is not None,
        )
        for tr in TaskRun.objects.filter(run_id=run_id)
    }
    events = []
    for event in Event.objects.filter(run_id=run_id).order_by("id"):
        times = ("start_time", "end_time")  # which are set; their values differ between two runs
        data = {k: v for k, v in event.data.items() if k not in ("run_id", "task_run_id", *times)}
        events.append((event.type, event.task_id, data, [event.data[k] is not None for k in times]))
    return {"status": run.status, "task_runs": task_runs, "events": events}


def test_the_set_based_cancel_leaves_what_the_loop_left(fan):
    services.run_cancel(run_id=fan("set-based"), force=False, actor="tester")
    _reference_cancel(fan("reference"))
    set_based, reference = _outcome("set-based"), _outcome("reference")
    assert set_based == reference
    assert set_based["task_runs"]["root"] == (COMPLETED, True)  # a finished task run stays as it was
    assert [t for t, task_id, *_ in set_based["events"] if t == "task.cancelled"] == ["task.cancelled"] * 6
    assert AuditEvent.objects.filter(action="run.cancelled", resource="runs/set-based").count() == 1


def test_a_cancel_is_the_same_few_statements_whatever_the_run_size(api, fan):
    def statements(run_id: str) -> int:
        with CaptureQueriesContext(connection) as queries:
            assert services.run_cancel(run_id=run_id, force=False) == 6
        return len(queries.captured_queries)

    small = statements(fan("small"))
    put_task(api, "wide_root")
    for n in range(40):
        put_task(api, f"wide{n}", dependencies=["wide_root"])
    put_dag(api, "wide", ["wide_root", *(f"wide{n}" for n in range(40))])
    run_id = api.post("/api/schedule-dag", {"dag_id": "wide"}, format="json").json()["run_id"]
    with CaptureQueriesContext(connection) as queries:
        assert services.run_cancel(run_id=run_id, force=False) == 41
    assert len(queries.captured_queries) == small
    assert set(TaskRun.objects.filter(run_id=run_id).values_list("status", flat=True)) == {CANCELLED}
    assert Event.objects.filter(run_id=run_id, type="task.cancelled").count() == 41
