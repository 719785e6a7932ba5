"""A task run's completion: running -> completed, its dependents that became ready queued and woken,
its run completed when nothing is left unfinished.

Four paths, one outcome. On PostgreSQL, with what the agent knows of the attempt (its
`Execution`): a task run nothing waits for completes in one statement (`_complete_leaf`); one whose
dependents wait for it alone completes and queues them in one statement
(`_complete_single_upstream`); a fan-in takes the locks first and reads the other upstreams after
them (`_complete_with_dependents`). Elsewhere (SQLite, or no `Execution`): `_complete_any`.

Completions do not lock the run row, so they proceed in parallel; they lock task run rows, in
primary-key order, the order cancel and fail use for task run rows, then the run's counter of
unfinished task runs (`RunProgress`), which only completions lock. Fan-in safety comes from locking
the dependent's row. Every step is conditional on (status, attempt), so a duplicate or late outcome
changes nothing, the counter included: it is decremented only by the statement that completed the
task run.

The counter serializes the completions of one run from its decrement to their COMMIT, so the
decrement comes last: the last CTE of a one-statement completion, the last statement of a
transaction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from types import SimpleNamespace

from django.db import connection, transaction
from django.db.models import Q

from orchestrator.events.services import (
    dispatched_at_sql,
    event_emit_task_run,
    event_emit_task_runs,
    task_run_event_data,
)
from orchestrator.runs.claim import Execution
from orchestrator.runs.models import (
    COMPLETED,
    PAUSED,
    PENDING,
    QUEUED,
    RUNNING,
    Run,
    TaskRun,
)  # fmt: skip
from orchestrator.runs.state import queued_events_sql, run_complete_if_done, task_runs_set_status
from orchestrator.runs.wakeups import Wakeup, send_on_commit
from shared.api.time import now_ms
from shared.bulkinsert import among
from shared.prepared import prepared_cursor


def task_run_complete(
    *, task_run_id: str, attempt: int, run_id: str, execution: Execution | None = None
) -> str | None:
    """running -> completed, its ready dependents queued, its run completed when it was the last
    (the run's counter of unfinished task runs says which completion that is).
    `execution` (what the agent knows of the attempt) lets PostgreSQL take the shortest path.
    Returns `completed`, or None when this attempt no longer owns the task run."""
    if execution is not None and not execution.has_dependents and connection.vendor == "postgresql":
        outcome = _complete_leaf(execution)
    elif execution is not None and connection.vendor == "postgresql":
        outcome = _complete_single_upstream(execution) or _complete_with_dependents(execution)
    else:
        outcome = _complete_any(task_run_id, attempt, run_id, execution)
    if outcome.done and outcome.run_may_be_done:
        run_complete_if_done(run_id, counted=outcome.unfinished is not None)
    return COMPLETED if outcome.done else None


@dataclass(frozen=True)
class Completion:
    done: bool  # this attempt completed the task run (False: it no longer owned it)
    # the run's task runs not completed after this one, from the counter (None: the run has none)
    unfinished: int | None = None
    dispatched: bool = False  # dependents were queued (so the run goes on)

    @property
    def run_may_be_done(self) -> bool:
        """The run's completion is worth checking after the commit. With the counter, only by the
        completion that took it to zero: the counter's row lock orders the decrements, so exactly
        one sees zero, after every other completion of the run committed. (At or below zero: a
        counter that was ever too low still gets its run checked, and the check reads the task runs
        themselves.) Without it, after every completion that queued nothing, as before it existed."""
        if self.unfinished is not None:
            return self.unfinished <= 0
        return not self.dispatched


# The counter's decrement, the last CTE of a completion statement (`{done}` names the CTE that
# returns the completed task run: nothing is counted when the completion changed nothing).
def _counted_sql(done: str, run: str = "run") -> str:
    return f"""counted AS (
    UPDATE orch_runs_runprogress SET unfinished = unfinished - 1
     WHERE run_id = %({run})s AND EXISTS (SELECT 1 FROM {done})
    RETURNING unfinished
)"""  # noqa: S608 - CTE and parameter names of this module; values are placeholders


# The completion of a task run nothing waits for, its event, and the run's counter, in one statement
# (atomic on its own). The main query reads the CTEs in this order (the event before the counter),
# so the counter's row is locked for the least time before the COMMIT.
LEAF_COMPLETE_SQL = f"""
WITH done AS (
    UPDATE orch_runs_taskrun SET status = 'completed', end_time = %(now)s, exit_code = 0
     WHERE id = %(id)s AND status = 'running' AND attempts = %(attempt)s
    RETURNING id
), event AS (
    INSERT INTO orch_events_event (type, occurred_at, run_id, dag_id, task_id, data, dispatched_at)
    SELECT 'task.completed', %(now)s, %(run)s, %(dag)s, %(task)s, %(data)s::jsonb, {dispatched_at_sql("'task.completed'", "%(now)s")} FROM done
    RETURNING 1
), {_counted_sql("done", run="counted_run")}
SELECT EXISTS (SELECT 1 FROM done), (SELECT count(*) FROM event), (SELECT unfinished FROM counted)
"""  # noqa: S608 - status constants; values are placeholders


def _complete_leaf(execution: Execution, now: datetime | None = None, *, count: bool = True) -> Completion:
    """A task run nothing waits for: its completion, its event and the counter are one statement
    (atomic on its own), with no dependents to lock or queue. `count=False`: the caller decrements
    the counter itself, last in its transaction."""
    now = now or now_ms()
    tr = SimpleNamespace(id=execution.task_run_id, task_id=execution.task_id, status=COMPLETED,
                         start_time=execution.start_time, end_time=now)  # fmt: skip
    data = task_run_event_data(tr, SimpleNamespace(run_id=execution.run_id, dag_id=execution.dag_id))
    params = {
        "now": now,
        "id": execution.task_run_id,
        "attempt": execution.attempt,
        "run": execution.run_id,
        "dag": execution.dag_id or "",
        "task": execution.task_id,
        "data": json.dumps(data),
        # no run has the empty id: the decrement finds no row
        "counted_run": execution.run_id if count else "",
    }
    with prepared_cursor() as cursor:
        cursor.execute(LEAF_COMPLETE_SQL, params)
        done, _, unfinished = cursor.fetchone()
    return Completion(done=done, unfinished=unfinished)


# The completion of a task run whose pending dependents wait for it alone (a chain's links, a
# fan-out's root): one statement, atomic on its own, locks the task run and those dependents in
# primary-key order (as everywhere), completes it, queues them and inserts the events. Nothing else
# needs reading: a dependent with this one upstream is ready once it completed. When a dependent
# also waits for another task run (fan-in), the statement changes nothing and says so: the other
# upstream's state must then be read after the locks, in a snapshot of its own (the statement's
# snapshot predates them), which `_complete_with_dependents` does. The dependents are found by
# primary key from the list the task run carries (`dependents`), or, on a task run from before that
# list, among the run's pending task runs (a cost that grows with the run).
BY_LIST = "t.id = ANY(%(dependents)s::text[]) AND t.status = 'pending'"
BY_SCAN = "t.run_id = %(run)s AND t.status = 'pending' AND t.upstream @> %(id_list)s::jsonb"


def _single_upstream_sql(dependents: str) -> str:
    return f"""
WITH locked AS MATERIALIZED (
    SELECT t.id, t.upstream
      FROM orch_runs_taskrun t
     WHERE t.id = %(id)s OR ({dependents})
     ORDER BY t.id
       FOR UPDATE
), checked AS (
    SELECT count(*) FILTER (WHERE l.id <> %(id)s AND jsonb_array_length(l.upstream) > 1) AS fan_in
      FROM locked l
), done AS (
    UPDATE orch_runs_taskrun t SET status = 'completed', end_time = %(now)s, exit_code = 0
      FROM checked c
     WHERE t.id = %(id)s AND t.status = 'running' AND t.attempts = %(attempt)s AND c.fan_in = 0
    RETURNING t.id
), ready AS (
    UPDATE orch_runs_taskrun t SET status = 'queued', queued_at = %(now)s, dispatched_at = %(now)s
      FROM locked l
     WHERE t.id = l.id AND l.id <> %(id)s AND t.status = 'pending'
       AND EXISTS (SELECT 1 FROM done)
       -- dependents of a paused run stay pending until it is resumed (a pause committing meanwhile
       -- is caught by the claim, which starts nothing of a paused run)
       AND NOT EXISTS (SELECT 1 FROM orch_runs_run r WHERE r.run_id = %(run)s AND r.status = 'paused')
    RETURNING t.id, t.task_id, t.queue, t.attempts
), events AS (
    INSERT INTO orch_events_event (type, occurred_at, run_id, dag_id, task_id, data, dispatched_at)
    SELECT 'task.completed', %(now)s, %(run)s, %(dag)s, %(task)s, %(data)s::jsonb,
           {dispatched_at_sql("'task.completed'", "%(now)s::timestamptz")} FROM done
    UNION ALL
    {queued_events_sql()}
    RETURNING 1
), {_counted_sql("done")}
SELECT c.fan_in, (SELECT count(*) FROM done),
       (SELECT coalesce(jsonb_agg(jsonb_build_array(r.id, r.queue, r.attempts) ORDER BY r.id), '[]')
          FROM ready r),
       (SELECT count(*) FROM events), (SELECT unfinished FROM counted)
  FROM checked c
"""  # noqa: S608 - status constants; values are placeholders


SINGLE_UPSTREAM_COMPLETE_SQL = _single_upstream_sql(BY_LIST)
SINGLE_UPSTREAM_SCAN_SQL = _single_upstream_sql(BY_SCAN)


def _complete_single_upstream(execution: Execution) -> Completion | None:
    """The completion, or None when a dependent also waits for another task run."""
    now = now_ms()
    tr = SimpleNamespace(id=execution.task_run_id, task_id=execution.task_id, status=COMPLETED,
                         start_time=execution.start_time, end_time=now)  # fmt: skip
    data = task_run_event_data(tr, SimpleNamespace(run_id=execution.run_id, dag_id=execution.dag_id))
    params = {
        "id": execution.task_run_id,
        "id_list": json.dumps([execution.task_run_id]),
        "run": execution.run_id,
        "attempt": execution.attempt,
        "now": now,
        "dag": execution.dag_id or "",
        "dag_or_null": execution.dag_id,
        "task": execution.task_id,
        "data": json.dumps(data),
        "dependents": execution.dependents,
    }
    sql = SINGLE_UPSTREAM_SCAN_SQL if execution.dependents is None else SINGLE_UPSTREAM_COMPLETE_SQL
    with prepared_cursor() as cursor:
        cursor.execute(sql, params)
        fan_in, done, ready, _, unfinished = cursor.fetchone()
    if fan_in:
        return None
    ready = json.loads(ready) if isinstance(ready, str) else ready
    wakeups = [Wakeup(pk, queue, attempts) for pk, queue, attempts in ready]
    send_on_commit(wakeups)  # the statement was its own transaction: sent at once
    return Completion(done=bool(done), unfinished=unfinished, dispatched=bool(wakeups))


COUNT_COMPLETED_SQL = (
    "UPDATE orch_runs_runprogress SET unfinished = unfinished - 1 WHERE run_id = %s RETURNING unfinished"
)


def _count_completed(run_id: str) -> int | None:
    """The counter's decrement on its own, the last statement of a completing transaction (its row
    stays locked until the COMMIT). None: the run has no counter."""
    with prepared_cursor() as cursor:
        cursor.execute(COUNT_COMPLETED_SQL, [run_id])
        row = cursor.fetchone()
    return None if row is None else row[0]


@transaction.atomic
def _complete_with_dependents(execution: Execution) -> Completion:
    """`_complete_any` on PostgreSQL for the agent's hot path, in fewer round trips: one
    statement finds and locks the task run and its pending dependents (primary-key order, as
    everywhere), one completes it with its event, and the ready dependents are queued with one
    UPDATE and one events insert. Fan-in is as safe as there: the dependents are locked first, and
    the other upstream task runs' states are read after the lock, in a fresh snapshot."""
    finished_id = execution.task_run_id
    if execution.dependents is None:  # a task run from before the list
        waiting = Q(run_id=execution.run_id, status=PENDING, upstream__contains=[finished_id])
    else:
        waiting = Q(pk__in=execution.dependents, status=PENDING)
    rows = list(
        TaskRun.objects.select_for_update(of=("self",))
        .filter(Q(pk=finished_id) | waiting)
        .order_by("pk")
        .values_list("pk", "status", "upstream", "task_id", "queue", "attempts", "run__status")
    )
    now = now_ms()
    if not _complete_leaf(execution, now, count=False).done:
        return Completion(done=False)
    run = SimpleNamespace(run_id=execution.run_id, dag_id=execution.dag_id)
    candidates = [
        SimpleNamespace(
            id=pk,
            upstream=upstream,
            task_id=task_id,
            queue=queue,
            attempts=attempts,
            status=QUEUED,
            start_time=None,
            end_time=None,
        )
        for pk, status, upstream, task_id, queue, attempts, run_status in rows
        if pk != finished_id and status == PENDING and run_status != PAUSED
    ]
    needed = {u for tr in candidates for u in tr.upstream} - {finished_id}
    done = set(TaskRun.objects.filter(pk__in=among(needed), status=COMPLETED).values_list("pk", flat=True))
    done.add(finished_id)
    ready = [tr for tr in candidates if all(u in done for u in tr.upstream)]
    if ready:
        TaskRun.objects.filter(pk__in=[tr.id for tr in ready], status=PENDING).update(
            status=QUEUED, queued_at=now, dispatched_at=now
        )
        event_emit_task_runs(ready, run)
    wakeups = [Wakeup(tr.id, tr.queue, tr.attempts) for tr in ready]
    send_on_commit(wakeups)
    return Completion(done=True, unfinished=_count_completed(execution.run_id), dispatched=bool(wakeups))


def _dependents_of(run_id: str, finished_id: str, listed: list[str] | None) -> list[str]:
    pending = TaskRun.objects.filter(run_id=run_id, status=PENDING)
    if listed is not None:  # the task run's own list (None: a task run from before it)
        return list(pending.filter(pk__in=listed).values_list("pk", flat=True))
    if connection.vendor == "postgresql":
        return list(pending.filter(upstream__contains=[finished_id]).values_list("pk", flat=True))
    return [pk for pk, up in pending.values_list("pk", "upstream") if finished_id in up]


@transaction.atomic
def _complete_any(task_run_id: str, attempt: int, run_id: str, execution: Execution | None) -> Completion:
    """Completions do not lock the run row, so they proceed in parallel. The task run and its
    pending dependents are locked together in primary-key order, the order cancel and fail use
    for task run rows, so none of them can deadlock; a cancelled or failed run has no pending
    task runs left, so nothing is queued for it (the `status = pending` conditions decide)."""
    leaf = execution is not None and not execution.has_dependents
    listed = execution.dependents if execution is not None else None
    candidates = [] if leaf else _dependents_of(run_id, task_run_id, listed)
    if candidates:
        list(
            TaskRun.objects.select_for_update()
            .filter(pk__in=[task_run_id, *candidates])
            .order_by("pk")
            .values_list("pk")
        )
    now = now_ms()
    if not TaskRun.objects.filter(pk=task_run_id, status=RUNNING, attempts=attempt).update(
        status=COMPLETED, end_time=now, exit_code=0
    ):
        return Completion(done=False)
    run: Run | SimpleNamespace
    tr: TaskRun | SimpleNamespace
    if execution is not None:  # what the agent already knows: no re-read on the hot path
        run = SimpleNamespace(run_id=run_id, dag_id=execution.dag_id)
        tr = SimpleNamespace(id=task_run_id, task_id=execution.task_id, status=COMPLETED,
                             start_time=execution.start_time, end_time=now)  # fmt: skip
    else:
        run = Run.objects.get(pk=run_id)
        tr = TaskRun.objects.get(pk=task_run_id)
    event_emit_task_run(tr, run)
    wakeups = _queue_ready_dependents(run, candidates) if candidates else []
    send_on_commit(wakeups)
    return Completion(done=True, unfinished=_count_completed(run_id), dispatched=bool(wakeups))


def _queue_ready_dependents(run: Run | SimpleNamespace, candidates: list[str]) -> list[Wakeup]:
    """Fan-in: the dependents are already locked, so of two upstream task runs completing at once
    the later one to take the locks sees the other's committed completion: the dependent is queued
    exactly once, never missed. Dependents of a paused run stay pending until it is resumed (a
    pause committing meanwhile is caught by the claim, which starts nothing of a paused run)."""
    locked = list(
        TaskRun.objects.filter(pk__in=candidates, status=PENDING).exclude(run__status=PAUSED).order_by("pk")
    )
    needed = {u for tr in locked for u in tr.upstream}
    done = set(TaskRun.objects.filter(pk__in=needed, status=COMPLETED).values_list("pk", flat=True))
    ready = [tr for tr in locked if set(tr.upstream) <= done]
    now = now_ms()
    queued = task_runs_set_status(ready, run, QUEUED, queued_at=now, dispatched_at=now)
    return [Wakeup(tr.id, tr.queue, tr.attempts) for tr in queued]
