"""Run status, and the admission of runs a DAG's `max_active_runs` holds back.

Every transition is a conditional UPDATE (`WHERE status = ...`), so a duplicate or late Celery
message can never run a task twice or bring a cancelled one back. Run-level changes (start, fail,
cancel, complete) lock the run row first, then task run rows in primary-key order; completions lock
only task run rows, in the same order. One order everywhere rules out deadlocks; fan-in safety
comes from locking the dependent's row (runs.completion).

A DAG's `max_active_runs`: further runs wait `pending`, admitted when an active one ends. No
counter is kept: the active runs are counted under the DAG's row lock, so every end state frees its
place simply by leaving the open states; nothing can be left over to release. Admission takes the
DAG's lock before the run's (DAG before run, everywhere).
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from types import SimpleNamespace
from typing import Any

from django.db import connection, transaction
from django.db.models import QuerySet

from orchestrator.definitions.models import Dag
from orchestrator.events.services import (
    dispatched_at_sql,
    event_emit_run,
    event_emit_task_run,
    event_emit_task_runs,
)
from orchestrator.runs.models import (
    CANCELLED,
    COMPLETED,
    FAILED,
    OPEN,
    PENDING,
    QUEUED,
    RUNNING,
    TERMINAL,
    Run,
    TaskRun,
)  # fmt: skip
from orchestrator.runs.wakeups import Wakeup, send_on_commit
from shared.api.time import now_ms
from shared.bulkinsert import among, text_array
from shared.prepared import prepared_cursor


def run_lock(run_id: str) -> Run:
    return Run.objects.select_for_update().get(pk=run_id)


def task_runs_set_status(
    task_runs: list[TaskRun], run: Run | SimpleNamespace, status: str, **fields: Any
) -> list[TaskRun]:
    """Moves the given task runs (still in their current status) to `status`; emits one event each."""
    changed = []
    for tr in task_runs:
        n = TaskRun.objects.filter(pk=tr.pk, status=tr.status).update(status=status, **fields)
        if n:
            tr.status = status
            for name, value in fields.items():
                setattr(tr, name, value)
            event_emit_task_run(tr, run)
            changed.append(tr)
    return changed


def task_runs_cancel(rows: QuerySet[TaskRun], run: Run, now: datetime) -> int:
    """Cancels the task runs `rows` selects (of one locked run) set-based: one statement locks them
    in primary-key order (the lock order, as a loop over them took it) and reads what their events
    say, one UPDATE cancels them, one insert writes their `task.cancelled` events (in primary-key
    order, as before). The rows cannot change in between: they are locked, and no task run of a
    locked run can enter the selection. A 10,000-task run cancels in three statements, not 20,000."""
    locked = [
        SimpleNamespace(id=pk, task_id=task_id, start_time=start_time, end_time=now, status=CANCELLED)
        for pk, task_id, start_time in rows.select_for_update()
        .order_by("pk")
        .values_list("id", "task_id", "start_time")
    ]
    if not locked:
        return 0
    rows.update(status=CANCELLED, end_time=now)
    event_emit_task_runs(locked, run)
    return len(locked)


def run_queue_ready(run: Run, ready: list[str] | None = None) -> list[Wakeup]:
    """Queues the pending task runs whose upstream all completed (a run's roots, and after a rerun
    those whose upstream was carried over), or of `ready`, those still pending: a new run's
    creation knows its ready task runs, and a 100,000-task DAG's are then not read back to find
    its roots. Caller holds the run lock, so no other transaction can move these pending rows
    meanwhile. A paused run queues nothing, nor does one its DAG's max_active_runs holds back."""
    if run.status not in (PENDING, RUNNING) or run.waiting:
        return []
    if ready is None:
        ready = _ready_ids(run)
    if not ready:
        return []
    if connection.vendor == "postgresql":
        return _queue_sql(run, ready)
    # Only the columns the events need, in primary-key order (the lock order)
    queued = [
        SimpleNamespace(
            id=pk,
            task_id=task_id,
            queue=queue,
            attempts=attempts,
            start_time=None,
            end_time=None,
            status=QUEUED,
        )  # fmt: skip
        for pk, task_id, queue, attempts in TaskRun.objects.filter(
            run=run, status=PENDING, pk__in=among(ready)
        )
        .order_by("pk")
        .values_list("id", "task_id", "queue", "attempts")
    ]
    now = now_ms()
    TaskRun.objects.filter(pk__in=among(tr.id for tr in queued), status=PENDING).update(
        status=QUEUED, queued_at=now, dispatched_at=now
    )
    event_emit_task_runs(queued, run)
    return [Wakeup(tr.id, tr.queue, tr.attempts) for tr in queued]


def _ready_ids(run: Run) -> list[str]:
    """The pending task runs of `run` whose upstream all completed. Only the columns the decision
    needs: a large DAG has thousands pending."""
    pending = list(TaskRun.objects.filter(run=run, status=PENDING).values_list("id", "upstream"))
    pending_ids = {pk for pk, _ in pending}
    # an upstream still pending is not completed: only the others need a look
    needed = {u for _, upstream in pending for u in upstream} - pending_ids
    done = set(TaskRun.objects.filter(pk__in=among(needed), status=COMPLETED).values_list("pk", flat=True))
    return [pk for pk, upstream in pending if all(u in done for u in upstream)]


@cache
def queued_events_sql() -> str:
    """The `task.queued` events (the outbox's columns) of the task runs a statement's `ready` CTE
    returned (id, task_id): for the statements that queue task runs and write their events in one."""
    return f"""SELECT 'task.queued', %(now)s, %(run)s, %(dag)s, r.task_id,
           jsonb_build_object('run_id', %(run)s::text, 'dag_id', %(dag_or_null)s::text, 'task_id', r.task_id,
                              'task_run_id', r.id, 'status', 'queued', 'start_time', NULL,
                              'end_time', NULL, 'duration_seconds', NULL),
           {dispatched_at_sql("'task.queued'", "%(now)s::timestamptz")}
      FROM ready r"""  # noqa: S608 - a status constant and the outbox's column; values are placeholders


def _queue_statement(ids_sql: str) -> str:
    """The task runs' UPDATE and their events in one statement, events in primary-key order (the
    database's, as before); built on first use (the outbox's consumers are known by then)."""
    return f"""
WITH ready AS (
    UPDATE orch_runs_taskrun t SET status = 'queued', queued_at = %(now)s, dispatched_at = %(now)s
     WHERE t.id = ANY({ids_sql}) AND t.run_id = %(run)s AND t.status = 'pending'
    RETURNING t.id, t.task_id, t.queue, t.attempts
), events AS (
    INSERT INTO orch_events_event (type, occurred_at, run_id, dag_id, task_id, data, dispatched_at)
    {queued_events_sql()}
     ORDER BY r.id
)
SELECT r.id, r.queue, r.attempts FROM ready r ORDER BY r.id
"""  # noqa: S608 - status constants; values are placeholders


def _queue_sql(run: Run, ready: list[str]) -> list[Wakeup]:
    """Those of `ready` still pending queued, with their events: one statement, one array of ids
    (`= ANY` probes the primary key per id, where a JSON list as a subquery was planned as a
    nested loop re-reading the list per pending row: 1 s for a 100,000-task DAG's roots)."""
    ids_sql, ids = text_array(ready)
    params: dict[str, Any] = {"now": now_ms(), "ids": ids, "run": run.run_id, "dag": run.dag_id or "",
              "dag_or_null": run.dag_id}  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(_queue_statement(ids_sql.replace("%s", "%(ids)s")), params)
        return [Wakeup(pk, queue, attempts) for pk, queue, attempts in cursor.fetchall()]


@transaction.atomic
def run_start(*, run_id: str, ready: list[str] | None = None) -> None:
    """Queues a freshly scheduled run's roots, or `ready` (a second transaction, so that scheduling
    itself yields `pending` everywhere, as a freshly scheduled run must read)."""
    run = run_lock(run_id)
    send_on_commit(run_queue_ready(run, ready))


@transaction.atomic
def run_mark_running(run_id: str) -> None:
    # a run is pending until its first task run starts executing
    if Run.objects.filter(pk=run_id, status=PENDING).update(status=RUNNING):
        event_emit_run(Run.objects.get(pk=run_id))


# Every status but completed, named: the (run, status) index then probes each one directly, where
# `status <> 'completed'` walks all of the run's completed task runs (and their dead versions)
# first, once per completion: quadratic in the run's size.
NOT_COMPLETED = tuple(status for status, _ in TaskRun.STATUSES if status != COMPLETED)


UNFINISHED_SQL = f"""
SELECT EXISTS (SELECT 1 FROM orch_runs_taskrun
                WHERE run_id = %s AND status IN ({", ".join(f"'{status}'" for status in NOT_COMPLETED)}))
"""  # noqa: S608 - status constants; values are placeholders


def _has_unfinished(run_id: str) -> bool:
    """Asked after every completion that queued nothing: a prepared statement, not a query built."""
    with prepared_cursor() as cursor:
        cursor.execute(UNFINISHED_SQL, [run_id])
        return bool(cursor.fetchone()[0])


def run_complete_if_done(run_id: str, *, counted: bool = False) -> bool:
    """After a completion commits: the run completes when no task run is left unfinished. Checked
    outside the completing transaction (two last completions at once both see the other committed
    here); the conditional UPDATE under the run lock makes it happen once. The sweeper repeats it.
    `counted`: the run's counter of unfinished task runs (runs.models.RunProgress) reached zero, so
    the look before taking the lock is skipped; the one under the lock still decides."""
    if not counted and _has_unfinished(run_id):
        return False
    with transaction.atomic():
        run = run_lock(run_id)
        if run.status not in (PENDING, RUNNING):
            return False
        if _has_unfinished(run_id):
            return False
        now = now_ms()
        Run.objects.filter(pk=run.pk).update(status=COMPLETED, end_time=now)
        run.status, run.end_time = COMPLETED, now
        event_emit_run(run)
        _run_ended(run)
    return True


def _run_ended(run: Run) -> None:
    """A run of a DAG that ended may make room for a run its max_active_runs holds back."""
    if run.dag_id:
        dag_id = run.dag_id
        transaction.on_commit(lambda: dag_admit_if_waiting(dag_id=dag_id))


def run_fail(run: Run, now: datetime) -> None:
    """A run fails as soon as a task run fails for good; its dependents never start
    (pending and queued task runs are cancelled); task runs already running may finish. A paused
    run fails too: pausing stops new starts, not the outcome of what already runs."""
    if run.status not in OPEN:
        return
    Run.objects.filter(pk=run.pk).update(status=FAILED, end_time=now)
    run.status, run.end_time = FAILED, now
    task_runs_cancel(TaskRun.objects.filter(run=run, status__in=(PENDING, QUEUED)), run, now)
    event_emit_run(run)
    _run_ended(run)


def run_cancel_locked(run: Run, *, force: bool, now: datetime) -> int:
    """Cancels every unfinished task run of a locked run; running ones are stopped by their agent,
    which polls `task_run_still_mine`. Returns how many task runs were cancelled."""
    cancelled = task_runs_cancel(TaskRun.objects.filter(run=run).exclude(status__in=TERMINAL), run, now)
    if run.status not in TERMINAL:
        Run.objects.filter(pk=run.pk).update(status=CANCELLED, end_time=now, cancel_force=force)
        run.status, run.end_time, run.cancel_force = CANCELLED, now, force
        event_emit_run(run)
        _run_ended(run)
    elif force and not run.cancel_force:
        Run.objects.filter(pk=run.pk).update(cancel_force=True)
    return cancelled


def dag_admit_if_waiting(*, dag_id: str) -> int:
    """After a run of the DAG ended: nothing to do (one indexed read) unless runs wait for room."""
    if not Run.objects.filter(dag_id=dag_id, waiting=True).exists():
        return 0
    return dag_admit_waiting(dag_id=dag_id)


@transaction.atomic
def dag_admit_waiting(*, dag_id: str) -> int:
    """Admits waiting runs of the DAG, highest priority then oldest first, while fewer than
    `max_active_runs` are active (pending and admitted, running or paused). The DAG row's lock
    serializes admissions, then each admitted run is locked (DAG before run, everywhere), so the
    limit holds with any number of schedulers and agents. Returns how many were admitted."""
    dag = Dag.objects.select_for_update().filter(pk=dag_id).first()
    runs = Run.objects.filter(dag_id=dag_id)
    waiting = runs.filter(waiting=True, status__in=OPEN).order_by("-priority", "start_time", "run_id")
    if dag is None or dag.max_active_runs is None:
        room = None  # the limit was lifted (or the DAG deleted): every waiting run goes
    else:
        room = max(dag.max_active_runs - runs.filter(status__in=OPEN, waiting=False).count(), 0)
    admitted = 0
    for run_id in list(waiting.values_list("run_id", flat=True)[:room]):
        run = run_lock(run_id)
        if not run.waiting or run.status not in OPEN:
            continue
        Run.objects.filter(pk=run_id).update(waiting=False)
        run.waiting = False
        send_on_commit(run_queue_ready(run))
        admitted += 1
    return admitted


def dags_sweep() -> int:
    """Periodic safety net: admission for DAGs whose ending run's admission was lost with its process."""
    dag_ids = Run.objects.filter(waiting=True).values_list("dag_id", flat=True).distinct()[:100]
    return sum(dag_admit_waiting(dag_id=dag_id) for dag_id in dag_ids if dag_id)
