"""Emitting events into the outbox. Call inside the transaction that changes the state.

An event of a type no consumer (a webhook registration) subscribes to has nowhere to go: it is written as
dispatched already, so the dispatcher never reads or rewrites it (marking each one dispatched later
cost as much as everything else an agent writes per task run). A registration so receives the
events written after it exists, as it does when the dispatcher runs between the two.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from types import SimpleNamespace
from typing import Any, Protocol

from django.db import connection

from orchestrator.events.consumers import subscribed_event_types, subscribed_sql
from orchestrator.events.models import Event
from shared.api.time import iso, now_ms
from shared.bulkinsert import bulk_insert_rows, lines


# Runs emit events through here and sit above events: the shapes read from a run and a task run
# are stated here instead of importing their models. The completion hot path passes what the agent
# already knows (ids, status, times) as a SimpleNamespace rather than re-reading the rows, hence
# `| SimpleNamespace` below.
class Run(Protocol):
    @property
    def run_id(self) -> str: ...
    @property
    def dag_id(self) -> str | None: ...
    @property
    def status(self) -> str: ...
    @property
    def start_time(self) -> datetime | None: ...
    @property
    def end_time(self) -> datetime | None: ...


class TaskRun(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def task_id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def start_time(self) -> datetime | None: ...
    @property
    def end_time(self) -> datetime | None: ...


def event_emit(*, type: str, data: dict[str, Any]) -> Event:
    """`data` is the webhook payload's data object: run_id, dag_id, task_id, task_run_id, status,
    start_time, end_time, duration_seconds (agent events carry agent fields instead)."""
    occurred = now_ms()
    return Event.objects.create(
        type=type,
        occurred_at=occurred,
        run_id=data.get("run_id") or "",
        dag_id=data.get("dag_id") or "",
        task_id=data.get("task_id") or "",
        data=data,
        dispatched_at=None if type in subscribed_event_types() else occurred,
    )


def _duration(start: datetime | None, end: datetime | None) -> int | None:
    return int((end - start).total_seconds()) if start and end else None


def event_emit_task_runs(task_runs: Sequence[TaskRun | SimpleNamespace], run: Run | SimpleNamespace) -> None:
    """One insert for many task runs' events (scheduling, queueing or cancelling a large DAG), in
    the order given. On PostgreSQL the database builds each event from six columns sent as one
    text each (`_emit_sql`)."""
    if not task_runs:
        return
    occurred = now_ms()
    if connection.vendor != "postgresql" or not _emit_sql(task_runs, run, occurred):
        _emit_rows(task_runs, run, occurred)


def _emit_rows(
    task_runs: Sequence[TaskRun | SimpleNamespace], run: Run | SimpleNamespace, occurred: datetime
) -> None:
    """The events built in Python, inserted as rows."""
    dag_id = run.dag_id or ""
    subscribed = subscribed_event_types()
    bulk_insert_rows(
        Event,
        [
            {
                "type": f"task.{tr.status}",
                "occurred_at": occurred,
                "run_id": run.run_id,
                "dag_id": dag_id,
                "task_id": tr.task_id,
                "data": task_run_event_data(tr, run),
                "dispatched_at": None if f"task.{tr.status}" in subscribed else occurred,
            }
            for tr in task_runs
        ],
    )


# The data object as `task_run_event_data` writes it; the columns come as lines (an empty line: null).
TASK_RUN_EVENTS_SQL = """
INSERT INTO orch_events_event (type, occurred_at, run_id, dag_id, task_id, data, dispatched_at)
SELECT 'task.' || u.status, %(now)s::timestamptz, %(run)s::text, %(dag)s::text, u.task_id,
       jsonb_build_object('run_id', %(run)s::text, 'dag_id', %(dag_or_null)s::text, 'task_id', u.task_id,
                          'task_run_id', u.id, 'status', u.status, 'start_time', u.start_time,
                          'end_time', u.end_time, 'duration_seconds', u.duration::int),
       CASE WHEN u.status = ANY(%(subscribed)s::text[]) THEN NULL ELSE %(now)s::timestamptz END
  FROM unnest(string_to_array(%(ids)s, E'\\n'), string_to_array(%(task_ids)s, E'\\n'),
              string_to_array(%(statuses)s, E'\\n'), string_to_array(%(starts)s, E'\\n', ''),
              string_to_array(%(ends)s, E'\\n', ''), string_to_array(%(durations)s, E'\\n', ''))
       WITH ORDINALITY AS u(id, task_id, status, start_time, end_time, duration, n)
 ORDER BY u.n
"""


def _emit_sql(
    task_runs: Sequence[TaskRun | SimpleNamespace], run: Run | SimpleNamespace, occurred: datetime
) -> bool:
    """The events of `task_runs` in one statement whose parameters are six texts: each column's
    values joined by line breaks, split by PostgreSQL. Built row by row in Python and unpacked from
    a JSON document, a 100,000-task run's events cost 1.5 s of Python and 2.3 s of PostgreSQL (and
    psycopg quotes a list parameter's elements one by one, in Python). False, nothing written, when
    a value cannot be sent so (an empty id, a line break: ids and task ids never have them)."""
    times: dict[datetime | None, str] = {}  # a batch shares few distinct times: each formatted once

    def text(value: datetime | None) -> str:
        if value not in times:
            times[value] = iso(value) or ""
        return times[value]

    columns = [
        [tr.id for tr in task_runs],
        [tr.task_id for tr in task_runs],
        [tr.status for tr in task_runs],
        [text(tr.start_time) for tr in task_runs],
        [text(tr.end_time) for tr in task_runs],
        ["" if (d := _duration(tr.start_time, tr.end_time)) is None else str(d) for tr in task_runs],
    ]
    joined = [lines(values, nullable=index >= 3) for index, values in enumerate(columns)]
    if any(value is None for value in joined):
        return False
    ids, task_ids, statuses, starts, ends, durations = joined
    subscribed = [t.removeprefix("task.") for t in subscribed_event_types() if t.startswith("task.")]
    params = {"now": occurred, "run": run.run_id, "dag": run.dag_id or "", "dag_or_null": run.dag_id,
              "subscribed": subscribed, "ids": ids, "task_ids": task_ids, "statuses": statuses,
              "starts": starts, "ends": ends, "durations": durations}  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(TASK_RUN_EVENTS_SQL, params)
    return True


def event_emit_task_run(task_run: TaskRun | SimpleNamespace, run: Run | SimpleNamespace) -> Event:
    """`task.<status>` for a task run's new state (its webhook payload data)."""
    return event_emit(type=f"task.{task_run.status}", data=task_run_event_data(task_run, run))


def dispatched_at_sql(event_type_sql: str, now_sql: str) -> str:
    """The `dispatched_at` of an event written by a single SQL statement (PostgreSQL): NULL while a
    registration subscribes to its type, else the time it was written (see the module's note)."""
    return f"CASE WHEN {subscribed_sql(event_type_sql)} THEN NULL ELSE {now_sql} END"


def task_run_event_data(task_run: TaskRun | SimpleNamespace, run: Run | SimpleNamespace) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "dag_id": run.dag_id,
        "task_id": task_run.task_id,
        "task_run_id": task_run.id,
        "status": task_run.status,
        "start_time": iso(task_run.start_time),
        "end_time": iso(task_run.end_time),
        "duration_seconds": _duration(task_run.start_time, task_run.end_time),
    }


def event_emit_run(run: Run, *, type: str = "") -> Event:
    """`dag.<status>` for a run's new state (or `type`, e.g. `dag.resumed`); schedule-task runs (no
    DAG) emit them too."""
    return event_emit(
        type=type or f"dag.{run.status}",
        data={
            "run_id": run.run_id,
            "dag_id": run.dag_id,
            "task_id": None,
            "task_run_id": None,
            "status": run.status,
            "start_time": iso(run.start_time),
            "end_time": iso(run.end_time),
            "duration_seconds": _duration(run.start_time, run.end_time),
        },
    )
