"""Task run and run state machine (run status follows its task runs).

Every transition is a conditional UPDATE (`WHERE status = ...`), so a duplicate or late Celery
message can never run a task twice or bring a cancelled one back. Run-level changes (start, fail,
cancel, complete) lock the run row first, then task run rows in primary-key order; completions lock
only task run rows, in the same order. One order everywhere rules out deadlocks; fan-in safety
comes from locking the dependent's row (see `_finish_completed`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any

from django.db import connection, transaction
from django.db.models import F, Q

from orchestrator.events.services import (
    dispatched_at_sql,
    event_emit_run,
    event_emit_task_run,
    event_emit_task_runs,
    task_run_event_data,
)
from orchestrator.runs.dispatch import Wakeup, send_on_commit
from orchestrator.runs.models import (
    CANCELLED,
    COMPLETED,
    FAILED,
    OPEN,
    PAUSED,
    PENDING,
    QUEUED,
    RUNNING,
    TERMINAL,
    Run,
    TaskLogLine,
    TaskRun,
)  # fmt: skip
from shared.api.time import iso, now_ms
from shared.bulkinsert import among
from shared.prepared import prepared_cursor


@dataclass(frozen=True)
class Execution:
    """What an agent needs to run one attempt; read once at claim time."""

    task_run_id: str
    run_id: str
    attempt: int
    max_attempts: int
    command: str
    env: dict[str, str]
    timeout_seconds: int | None
    log_bytes: int
    log_truncated: bool
    task_id: str = ""
    dag_id: str | None = None
    start_time: datetime | None = None
    has_dependents: bool = True
    pool: str | None = None


def lock_run(run_id: str) -> Run:
    return Run.objects.select_for_update().get(pk=run_id)


def _set_status(
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


def queue_ready(run: Run) -> list[Wakeup]:
    """Queues the pending task runs whose upstream all completed (a run's roots, and after a rerun
    those whose upstream was carried over). Caller holds the run lock, so no other transaction can
    move these pending rows meanwhile: one UPDATE and one events insert serve a large DAG. A paused
    run queues nothing, nor does one its DAG's max_active_runs holds back."""
    if run.status not in (PENDING, RUNNING) or run.waiting:
        return []
    # Only the columns the decision and the events need: a large DAG has thousands pending.
    pending = [
        SimpleNamespace(
            id=pk,
            task_id=task_id,
            queue=queue,
            attempts=attempts,
            upstream=upstream,
            start_time=None,
            end_time=None,
        )
        for pk, task_id, queue, attempts, upstream in TaskRun.objects.filter(run=run, status=PENDING)
        .order_by("pk")
        .values_list("id", "task_id", "queue", "attempts", "upstream")
    ]
    pending_ids = {tr.id for tr in pending}
    # an upstream still pending is not completed: only the others need a look
    needed = {u for tr in pending for u in tr.upstream} - pending_ids
    done = set(TaskRun.objects.filter(pk__in=among(needed), status=COMPLETED).values_list("pk", flat=True))
    ready = [tr for tr in pending if all(u in done for u in tr.upstream)]
    if not ready:
        return []
    now = now_ms()
    rows = TaskRun.objects.filter(run=run, status=PENDING)
    if len(ready) < len(pending):  # (all of them, as in a flat DAG: no list of ids to send)
        rows = rows.filter(pk__in=among(tr.id for tr in ready))
    rows.update(status=QUEUED, queued_at=now, dispatched_at=now)
    for tr in ready:
        tr.status = QUEUED
    event_emit_task_runs(ready, run)
    return [Wakeup(tr.id, tr.queue, tr.attempts) for tr in ready]


@transaction.atomic
def run_start(*, run_id: str) -> None:
    """Queues a freshly scheduled run's roots (a second transaction, so that scheduling itself
    yields `pending` everywhere, as a freshly scheduled run must read)."""
    run = lock_run(run_id)
    send_on_commit(queue_ready(run))


# The claim, its read and its `task.running` event in one statement (atomic on its own): the agent's
# hot path is one round trip. The event data matches events.services.task_run_event_data.
CLAIM_SQL = """
WITH claimed AS (
    UPDATE orch_runs_taskrun AS t
       SET status = 'running', attempts = t.attempts + 1, agent_id = %(agent)s, agent_session = %(session)s,
           start_time = %(now)s, end_time = NULL, exit_code = NULL
     WHERE t.id = %(id)s AND t.status = 'queued' AND t.attempts = %(attempt)s {guard}
       -- a dependent queued by an upstream completion racing a cancel/fail must not start, nor
       -- anything of a paused run
       AND EXISTS (SELECT 1 FROM orch_runs_run r WHERE r.run_id = t.run_id AND r.status IN ('pending', 'running'))
    RETURNING t.run_id, t.task_id, t.command, t.env, t.max_attempts, t.timeout_seconds, t.log_bytes,
              t.log_truncated, t.has_dependents, t.pool,
              (SELECT r.dag_id FROM orch_runs_run r WHERE r.run_id = t.run_id) AS dag_id,
              (SELECT r.status FROM orch_runs_run r WHERE r.run_id = t.run_id) AS run_status
), event AS (
    INSERT INTO orch_events_event (type, occurred_at, run_id, dag_id, task_id, data, dispatched_at)
    SELECT 'task.running', %(now)s, c.run_id, COALESCE(c.dag_id, ''), c.task_id,
           jsonb_build_object('run_id', c.run_id, 'dag_id', c.dag_id, 'task_id', c.task_id,
                              'task_run_id', %(id)s::text, 'status', 'running', 'start_time', %(now_iso)s::text,
                              'end_time', NULL, 'duration_seconds', NULL),
           {dispatched_running}
      FROM claimed c
)
SELECT * FROM claimed
"""
# A wake-up claims its own task run only while nothing orders the queue: the task run has no
# priority and no pool, and no task run with a positive priority waits in its queue (a partial index
# that stays empty without priorities answers that). Otherwise the agent claims the queue's best
# claimable task run instead (runs.claiming), and messages act as tokens.
FAST_GUARD = """AND t.priority = 0 AND t.pool IS NULL
       AND NOT EXISTS (SELECT 1 FROM orch_runs_taskrun q
                        WHERE q.queue = t.queue AND q.status = 'queued' AND q.priority > 0)"""
_RUNNING_DISPATCHED = dispatched_at_sql("'task.running'", "%(now)s")
FAST_CLAIM_SQL = CLAIM_SQL.format(guard=FAST_GUARD, dispatched_running=_RUNNING_DISPATCHED)
EXACT_CLAIM_SQL = CLAIM_SQL.format(guard="", dispatched_running=_RUNNING_DISPATCHED)


def claim(*, task_run_id: str, attempt: int, agent_id: str, agent_session: str = "") -> Execution | None:
    """queued -> running for exactly one message. None when this message is stale or a duplicate,
    or when the queue's order (priorities, pools) does not let it take its own task run.
    `agent_session` names the claiming process, whose heartbeat the sweeper then watches."""
    claimed = claim_row(task_run_id=task_run_id, attempt=attempt, agent_id=agent_id,
                        agent_session=agent_session, guarded=True)  # fmt: skip
    if claimed is None:
        _cancel_if_run_ended(task_run_id)
        return None
    return after_claim(claimed)


def after_claim(claimed: tuple[Execution, str]) -> Execution:
    """After the claim committed, in its own transaction: taking the run lock while holding the
    task run's row would invert the lock order cancel uses."""
    execution, run_status = claimed
    if run_status == PENDING:
        _mark_run_running(execution.run_id)
    return execution


def claim_row(
    *, task_run_id: str, attempt: int, agent_id: str, agent_session: str, guarded: bool
) -> tuple[Execution, str] | None:
    """The conditional UPDATE alone: the execution and the run's status before it started, or None.
    `guarded`: only while no priority or pool orders the queue (the wake-up's fast path)."""
    session = agent_session or None
    if connection.vendor != "postgresql":
        return _claim_portable(
            task_run_id=task_run_id, attempt=attempt, agent_id=agent_id, session=session, guarded=guarded
        )
    now = now_ms()
    params: dict[str, str | int | datetime | None] = {
        "agent": agent_id,
        "session": session,
        "now": now,
        "now_iso": iso(now),
        "id": task_run_id,
        "attempt": attempt,
    }
    with prepared_cursor() as cursor:
        cursor.execute(FAST_CLAIM_SQL if guarded else EXACT_CLAIM_SQL, params)
        row = cursor.fetchone()
    if row is None:
        return None
    (
        run_id,
        task_id,
        command,
        env,
        max_attempts,
        timeout,
        log_bytes,
        truncated,
        has_deps,
        pool,
        dag_id,
        run_status,
    ) = row
    return Execution(
        task_run_id=task_run_id, run_id=run_id, attempt=attempt + 1, max_attempts=max_attempts, command=command,
        env=json.loads(env) if isinstance(env, str) else env, timeout_seconds=timeout, log_bytes=log_bytes,
        log_truncated=truncated, task_id=task_id, dag_id=dag_id, start_time=now, has_dependents=has_deps,
        pool=pool,
    ), run_status  # fmt: skip


@transaction.atomic
def _mark_run_running(run_id: str) -> None:
    # a run is pending until its first task run starts executing
    if Run.objects.filter(pk=run_id, status=PENDING).update(status=RUNNING):
        event_emit_run(Run.objects.get(pk=run_id))


def _claim_portable(
    *, task_run_id: str, attempt: int, agent_id: str, session: str | None, guarded: bool
) -> tuple[Execution, str] | None:
    """The claim on SQLite (the embedded default). The conditional UPDATE still decides which
    message wins; the run's status needs no check inside it, because SQLite's immediate transactions
    run one writer at a time: a cancel or failure that commits first has already moved this task
    run out of `queued`, and no completion can queue it after its run ended."""
    tr = TaskRun.objects.select_related("run").filter(pk=task_run_id).first()
    if tr is None or tr.status != QUEUED or tr.attempts != attempt:
        return None
    if tr.run.status not in (PENDING, RUNNING):
        return None
    if guarded and (
        tr.priority != 0
        or tr.pool
        or TaskRun.objects.filter(queue=tr.queue, status=QUEUED, priority__gt=0).exists()
    ):
        return None
    with transaction.atomic():
        now = now_ms()
        if not TaskRun.objects.filter(pk=task_run_id, status=QUEUED, attempts=attempt).update(
            status=RUNNING,
            attempts=F("attempts") + 1,
            agent_id=agent_id,
            agent_session=session,
            start_time=now,
            end_time=None,
            exit_code=None,
        ):
            return None
        tr.status, tr.attempts, tr.agent_id, tr.start_time, tr.end_time = (
            RUNNING,
            attempt + 1,
            agent_id,
            now,
            None,
        )
        event_emit_task_run(tr, tr.run)
    return Execution(
        task_run_id=tr.id, run_id=tr.run_id, attempt=tr.attempts, max_attempts=tr.max_attempts, command=tr.command,
        env=tr.env, timeout_seconds=tr.timeout_seconds, log_bytes=tr.log_bytes, log_truncated=tr.log_truncated,
        task_id=tr.task_id, dag_id=tr.run.dag_id, start_time=now, has_dependents=tr.has_dependents, pool=tr.pool,
    ), tr.run.status  # fmt: skip


def claimed_by(*, task_run_id: str, attempt: int, agent_session: str) -> Execution | None:
    """The running attempt this agent process claimed, read back (a claim that committed though
    its answer was lost with the connection)."""
    tr = (
        TaskRun.objects.select_related("run")
        .filter(pk=task_run_id, status=RUNNING, attempts=attempt, agent_session=agent_session)
        .first()
    )
    if tr is None:
        return None
    return Execution(
        task_run_id=tr.id, run_id=tr.run_id, attempt=tr.attempts, max_attempts=tr.max_attempts, command=tr.command,
        env=tr.env, timeout_seconds=tr.timeout_seconds, log_bytes=tr.log_bytes, log_truncated=tr.log_truncated,
        task_id=tr.task_id, dag_id=tr.run.dag_id, start_time=tr.start_time, has_dependents=tr.has_dependents,
        pool=tr.pool,
    )  # fmt: skip


def still_mine(*, task_run_id: str, attempt: int) -> tuple[bool, bool]:
    """(still running this attempt, cancel with force) — polled by the agent while the command runs.
    A cancelled run stops its commands even if this task run's row escaped the cancel (claimed in
    the instant between the cancel's read and its update)."""
    row = (
        TaskRun.objects.filter(pk=task_run_id)
        .values_list("status", "attempts", "run__cancel_force", "run__status")
        .first()
    )
    if row is None:
        return False, True
    status, attempts, force, run_status = row
    return status == RUNNING and attempts == attempt and run_status != CANCELLED, bool(force)


def close_cancelled(*, task_run_id: str, attempt: int) -> None:
    """After the agent stopped a command because its run was cancelled: a row the cancel missed
    (claimed in the instant between the cancel's read and its update) is closed as cancelled."""
    with transaction.atomic():
        tr = (
            TaskRun.objects.select_related("run")
            .filter(pk=task_run_id, status=RUNNING, attempts=attempt, run__status=CANCELLED)
            .first()
        )
        if tr is not None:
            _set_status([tr], tr.run, CANCELLED, end_time=now_ms())


def _cancel_if_run_ended(task_run_id: str) -> None:
    """A queued task run of a cancelled or failed run never starts: close it instead of leaving it
    queued (it was queued by an upstream completion racing the cancel or failure)."""
    with transaction.atomic():
        tr = (
            TaskRun.objects.select_related("run")
            .filter(pk=task_run_id, status=QUEUED, run__status__in=(CANCELLED, FAILED))
            .first()
        )
        if tr is not None:
            _set_status([tr], tr.run, CANCELLED, end_time=now_ms())


def finish(
    *,
    task_run_id: str,
    attempt: int,
    ok: bool,
    exit_code: int | None,
    retryable: bool = True,
    note: str = "",
    run_id: str | None = None,
    execution: Execution | None = None,
) -> str | None:
    """running -> completed | failed (or back to queued for a retry). Returns the new status, or
    None when this attempt no longer owns the task run (cancelled, or recovered by the sweeper)."""
    run_id = run_id or TaskRun.objects.filter(pk=task_run_id).values_list("run_id", flat=True).first()
    if run_id is None:
        return None
    if not ok:
        return _finish_failed(task_run_id, attempt, run_id, exit_code, retryable, note)
    if execution is not None and not execution.has_dependents and connection.vendor == "postgresql":
        leaf = _finish_leaf(execution)
        if leaf.done and leaf.run_may_be_done:
            complete_run_if_done(run_id)
        return COMPLETED if leaf.done else None
    if execution is not None and connection.vendor == "postgresql":
        outcome = _finish_single_upstream(execution)
        done, dispatched = outcome if outcome is not None else _finish_with_dependents(execution)
    else:
        done, dispatched = _finish_completed(task_run_id, attempt, run_id, execution)
    if done and not dispatched:
        complete_run_if_done(run_id)
    return COMPLETED if done else None


# The completion of a task run nothing waits for, its event, and whether the run may be done, in
# one statement (atomic on its own). The probe reads the statement's snapshot, taken before this
# completion: when another task run is pending or queued, its own completion comes later and looks
# again (seeing this one committed), and when one failed or was cancelled the run cannot complete;
# either way there is nothing to check. Otherwise the others, if any, are running and may be
# completing at this very moment, each seeing the rest still running in its own snapshot: the run's
# completion is then checked after the commit, where every committed completion shows
# (`complete_run_if_done`). A pending or queued task run that is claimed, run and completed entirely
# while this statement is under way is the one case missed: the recovery sweep completes that run.
LEAF_COMPLETE_SQL = f"""
WITH done AS (
    UPDATE orch_runs_taskrun SET status = 'completed', end_time = %(now)s, exit_code = 0
     WHERE id = %(id)s AND status = 'running' AND attempts = %(attempt)s
    RETURNING id
), event AS (
    INSERT INTO orch_events_event (type, occurred_at, run_id, dag_id, task_id, data, dispatched_at)
    SELECT 'task.completed', %(now)s, %(run)s, %(dag)s, %(task)s, %(data)s::jsonb, {dispatched_at_sql("'task.completed'", "%(now)s")} FROM done
)
SELECT EXISTS (SELECT 1 FROM done),
       EXISTS (SELECT 1 FROM orch_runs_taskrun
                WHERE run_id = %(run)s AND status IN ({", ".join(f"'{s}'" for s in (PENDING, QUEUED, FAILED, CANCELLED))}))
"""  # noqa: S608 - status constants; values are placeholders


@dataclass(frozen=True)
class LeafCompletion:
    done: bool  # this attempt completed the task run (False: it no longer owned it)
    run_may_be_done: bool  # the run's completion is worth checking after the commit


def _finish_leaf(execution: Execution, now: datetime | None = None) -> LeafCompletion:
    """A task run nothing waits for: its completion and its event are one statement (atomic on
    its own), with no dependents to lock or queue."""
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
    }
    with prepared_cursor() as cursor:
        cursor.execute(LEAF_COMPLETE_SQL, params)
        done, waiting = cursor.fetchone()
    return LeafCompletion(done=done, run_may_be_done=done and not waiting)


# The completion of a task run whose pending dependents wait for it alone (a chain's links, a
# fan-out's root): one statement, atomic on its own, locks the task run and those dependents in
# primary-key order (as everywhere), completes it, queues them and inserts the events. Nothing else
# needs reading: a dependent with this one upstream is ready once it completed. When a dependent
# also waits for another task run (fan-in), the statement changes nothing and says so: the other
# upstream's state must then be read after the locks, in a snapshot of its own (the statement's
# snapshot predates them), which `_finish_with_dependents` does.
SINGLE_UPSTREAM_COMPLETE_SQL = f"""
WITH locked AS MATERIALIZED (
    SELECT t.id, t.upstream
      FROM orch_runs_taskrun t
     WHERE t.id = %(id)s
        OR (t.run_id = %(run)s AND t.status = 'pending' AND t.upstream @> %(id_list)s::jsonb)
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
    SELECT 'task.queued', %(now)s, %(run)s, %(dag)s, r.task_id,
           jsonb_build_object('run_id', %(run)s::text, 'dag_id', %(dag_or_null)s::text, 'task_id', r.task_id,
                              'task_run_id', r.id, 'status', 'queued', 'start_time', NULL,
                              'end_time', NULL, 'duration_seconds', NULL),
           {dispatched_at_sql("'task.queued'", "%(now)s::timestamptz")}
      FROM ready r
)
SELECT c.fan_in, (SELECT count(*) FROM done),
       (SELECT coalesce(jsonb_agg(jsonb_build_array(r.id, r.queue, r.attempts) ORDER BY r.id), '[]')
          FROM ready r)
  FROM checked c
"""  # noqa: S608 - status constants; values are placeholders


def _finish_single_upstream(execution: Execution) -> tuple[bool, bool] | None:
    """(completed, dependents queued), or None when a dependent also waits for another task run."""
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
    }
    with prepared_cursor() as cursor:
        cursor.execute(SINGLE_UPSTREAM_COMPLETE_SQL, params)
        fan_in, done, ready = cursor.fetchone()
    if fan_in:
        return None
    ready = json.loads(ready) if isinstance(ready, str) else ready
    wakeups = [Wakeup(pk, queue, attempts) for pk, queue, attempts in ready]
    send_on_commit(wakeups)  # the statement was its own transaction: sent at once
    return bool(done), bool(wakeups)


@transaction.atomic
def _finish_with_dependents(execution: Execution) -> tuple[bool, bool]:
    """`_finish_completed` on PostgreSQL for the agent's hot path, in fewer round trips: one
    statement finds and locks the task run and its pending dependents (primary-key order, as
    everywhere), one completes it with its event, and the ready dependents are queued with one
    UPDATE and one events insert. Fan-in is as safe as there: the dependents are locked first, and
    the other upstream task runs' states are read after the lock, in a fresh snapshot."""
    finished_id = execution.task_run_id
    rows = list(
        TaskRun.objects.select_for_update(of=("self",))
        .filter(
            Q(pk=finished_id) | Q(run_id=execution.run_id, status=PENDING, upstream__contains=[finished_id])
        )
        .order_by("pk")
        .values_list("pk", "status", "upstream", "task_id", "queue", "attempts", "run__status")
    )
    now = now_ms()
    if not _finish_leaf(execution, now).done:
        return False, False
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
    return True, bool(wakeups)


def _dependents_of(run_id: str, finished_id: str) -> list[str]:
    pending = TaskRun.objects.filter(run_id=run_id, status=PENDING)
    if connection.vendor == "postgresql":
        return list(pending.filter(upstream__contains=[finished_id]).values_list("pk", flat=True))
    return [pk for pk, up in pending.values_list("pk", "upstream") if finished_id in up]


@transaction.atomic
def _finish_completed(
    task_run_id: str, attempt: int, run_id: str, execution: Execution | None
) -> tuple[bool, bool]:
    """Completions do not lock the run row, so they proceed in parallel. The task run and its
    pending dependents are locked together in primary-key order, the order cancel and fail use
    for task run rows, so none of them can deadlock; a cancelled or failed run has no pending
    task runs left, so nothing is queued for it (the `status = pending` conditions decide)."""
    leaf = execution is not None and not execution.has_dependents
    candidates = [] if leaf else _dependents_of(run_id, task_run_id)
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
        return False, False
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
    return True, bool(wakeups)


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
    queued = _set_status(ready, run, QUEUED, queued_at=now, dispatched_at=now)
    return [Wakeup(tr.id, tr.queue, tr.attempts) for tr in queued]


@transaction.atomic
def _finish_failed(
    task_run_id: str, attempt: int, run_id: str, exit_code, retryable: bool, note: str
) -> str | None:
    run = lock_run(run_id)
    tr = TaskRun.objects.filter(pk=task_run_id, status=RUNNING, attempts=attempt).first()
    if tr is None:
        return None
    now = now_ms()
    if note:
        append_log(tr, [note])
    if retryable and tr.attempts < tr.max_attempts and run.status in OPEN:
        delay = tr.retry_delay_seconds
        _set_status(
            [tr], run, QUEUED, end_time=now, exit_code=exit_code, agent_id=None, agent_session=None,
            queued_at=now, dispatched_at=now, not_before=now + timedelta(seconds=delay),
        )  # fmt: skip
        send_on_commit([Wakeup(tr.id, tr.queue, tr.attempts, countdown=delay)])
        return QUEUED
    _set_status([tr], run, FAILED, end_time=now, exit_code=exit_code)
    fail_run(run, now)
    return FAILED


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


def complete_run_if_done(run_id: str) -> bool:
    """After a completion commits: the run completes when no task run is left unfinished. Checked
    outside the completing transaction (two last completions at once both see the other committed
    here); the conditional UPDATE under the run lock makes it happen once. The sweeper repeats it."""
    if _has_unfinished(run_id):
        return False
    with transaction.atomic():
        run = lock_run(run_id)
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
        transaction.on_commit(lambda: _admit(dag_id))


def _admit(dag_id: str) -> None:
    # runs.limits admits through this module (queue_ready, lock_run): a top-level import would loop
    from orchestrator.runs.limits import dag_admit_if_waiting

    dag_admit_if_waiting(dag_id=dag_id)


def fail_run(run: Run, now: datetime) -> None:
    """A run fails as soon as a task run fails for good; its dependents never start
    (pending and queued task runs are cancelled); task runs already running may finish. A paused
    run fails too: pausing stops new starts, not the outcome of what already runs."""
    if run.status not in OPEN:
        return
    Run.objects.filter(pk=run.pk).update(status=FAILED, end_time=now)
    run.status, run.end_time = FAILED, now
    waiting = list(TaskRun.objects.filter(run=run, status__in=(PENDING, QUEUED)).order_by("pk"))
    _set_status(waiting, run, CANCELLED, end_time=now)
    event_emit_run(run)
    _run_ended(run)


def cancel_locked(run: Run, *, force: bool, now: datetime) -> int:
    """Cancels every unfinished task run of a locked run; running ones are stopped by their agent,
    which polls `still_mine`. Returns how many task runs were cancelled."""
    unfinished = list(TaskRun.objects.filter(run=run).exclude(status__in=TERMINAL).order_by("pk"))
    changed = _set_status(unfinished, run, CANCELLED, end_time=now)
    if run.status not in TERMINAL:
        Run.objects.filter(pk=run.pk).update(status=CANCELLED, end_time=now, cancel_force=force)
        run.status, run.end_time, run.cancel_force = CANCELLED, now, force
        event_emit_run(run)
        _run_ended(run)
    elif force and not run.cancel_force:
        Run.objects.filter(pk=run.pk).update(cancel_force=True)
    return len(changed)


@transaction.atomic
def recover(*, task_run_id: str, attempt: int, agent_id: str) -> str | None:
    """An attempt held by an agent process that stopped heartbeating: retried if the task run has
    attempts left, else failed. Never left `running`. Conditional on the attempt, so an attempt
    claimed meanwhile by a live process is left alone."""
    tr = TaskRun.objects.filter(pk=task_run_id, status=RUNNING, attempts=attempt).first()
    if tr is None:
        return None
    note = f"[orchestrator] agent {agent_id} stopped responding; attempt {tr.attempts} abandoned"
    return finish(task_run_id=tr.id, attempt=tr.attempts, ok=False, exit_code=None, note=note)


def append_log(tr: TaskRun, lines: list[str]) -> None:
    now = now_ms()
    TaskLogLine.objects.bulk_create([TaskLogLine(task_run=tr, at=now, line=line) for line in lines])
    size = sum(len(line.encode()) + 1 for line in lines)
    TaskRun.objects.filter(pk=tr.pk).update(log_bytes=F("log_bytes") + size)
