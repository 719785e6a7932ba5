"""The claim: a wake-up's task run moves from `queued` to `running` for exactly one message, and the
agent that claimed it gets its `Execution`, read once at claim time.

The claim is a conditional UPDATE (`WHERE status = 'queued' AND attempts = ...`), so a duplicate or
late Celery message can never run a task twice or bring a cancelled one back: it finds the row
moved on and claims nothing. It locks only the task run's row; the run's row is locked afterwards,
in a transaction of its own (run before task runs is the order every run-level change keeps).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import F

from orchestrator.events.services import dispatched_at_sql, event_emit_task_run
from orchestrator.runs.models import CANCELLED, FAILED, PENDING, QUEUED, RUNNING, TaskRun
from orchestrator.runs.state import run_mark_running, task_runs_set_status
from shared.api.time import iso, now_ms
from shared.prepared import prepared_cursor

# The task run's columns an attempt needs, as the claim reads them (its RETURNING list is built
# from this tuple, so the statement and the Execution cannot disagree).
CLAIMED = ("run_id", "task_id", "command", "env", "max_attempts", "timeout_seconds", "log_bytes",
           "log_truncated", "has_dependents", "pool", "dependents")  # fmt: skip


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
    dependents: list[str] | None = None  # the task runs that wait for it (None: not recorded)

    @classmethod
    def of(
        cls, columns: Mapping[str, Any], *, task_run_id: str, attempt: int, dag_id: str | None,
        start_time: datetime | None,
    ) -> Execution:  # fmt: skip
        """The one constructor: the CLAIMED columns of a task run (a row of the claim, or a model's
        fields) and what the claim itself decided (the attempt's number, its start)."""
        env, dependents = columns["env"], columns["dependents"]
        return cls(
            task_run_id=task_run_id, attempt=attempt, dag_id=dag_id, start_time=start_time,
            env=json.loads(env) if isinstance(env, str) else env,
            dependents=json.loads(dependents) if isinstance(dependents, str) else dependents,
            **{name: columns[name] for name in CLAIMED if name not in ("env", "dependents")},
        )  # fmt: skip


def _claimed_columns(tr: TaskRun) -> dict[str, Any]:
    return {name: getattr(tr, name) for name in CLAIMED}


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
    RETURNING {claimed},
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
_RETURNING = ", ".join(f"t.{name}" for name in CLAIMED)
FAST_CLAIM_SQL = CLAIM_SQL.format(
    guard=FAST_GUARD, dispatched_running=_RUNNING_DISPATCHED, claimed=_RETURNING
)
EXACT_CLAIM_SQL = CLAIM_SQL.format(guard="", dispatched_running=_RUNNING_DISPATCHED, claimed=_RETURNING)


def task_run_claim(
    *, task_run_id: str, attempt: int, agent_id: str, agent_session: str = ""
) -> Execution | None:
    """queued -> running for exactly one message. None when this message is stale or a duplicate,
    or when the queue's order (priorities, pools) does not let it take its own task run.
    `agent_session` names the claiming process, whose heartbeat the sweeper then watches."""
    claimed = task_run_claim_row(task_run_id=task_run_id, attempt=attempt, agent_id=agent_id,
                                 agent_session=agent_session, guarded=True)  # fmt: skip
    if claimed is None:
        _task_run_cancel_if_run_ended(task_run_id)
        return None
    return task_run_after_claim(claimed)


def task_run_after_claim(claimed: tuple[Execution, str]) -> Execution:
    """After the claim committed, in its own transaction: taking the run lock while holding the
    task run's row would invert the lock order cancel uses."""
    execution, run_status = claimed
    if run_status == PENDING:
        run_mark_running(execution.run_id)
    return execution


def task_run_claim_row(
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
    *columns, dag_id, run_status = row
    execution = Execution.of(dict(zip(CLAIMED, columns, strict=True)), task_run_id=task_run_id,
                             attempt=attempt + 1, dag_id=dag_id, start_time=now)  # fmt: skip
    return execution, run_status


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
    execution = Execution.of(_claimed_columns(tr), task_run_id=tr.id, attempt=tr.attempts,
                             dag_id=tr.run.dag_id, start_time=now)  # fmt: skip
    return execution, tr.run.status


def task_run_claimed_by(*, task_run_id: str, attempt: int, agent_session: str) -> Execution | None:
    """The running attempt this agent process claimed, read back (a claim that committed though
    its answer was lost with the connection)."""
    tr = (
        TaskRun.objects.select_related("run")
        .filter(pk=task_run_id, status=RUNNING, attempts=attempt, agent_session=agent_session)
        .first()
    )
    if tr is None:
        return None
    return Execution.of(_claimed_columns(tr), task_run_id=tr.id, attempt=tr.attempts,
                        dag_id=tr.run.dag_id, start_time=tr.start_time)  # fmt: skip


def task_run_still_mine(*, task_run_id: str, attempt: int) -> tuple[bool, bool]:
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


def task_run_close_cancelled(*, task_run_id: str, attempt: int) -> None:
    """After the agent stopped a command because its run was cancelled: a row the cancel missed
    (claimed in the instant between the cancel's read and its update) is closed as cancelled."""
    with transaction.atomic():
        tr = (
            TaskRun.objects.select_related("run")
            .filter(pk=task_run_id, status=RUNNING, attempts=attempt, run__status=CANCELLED)
            .first()
        )
        if tr is not None:
            task_runs_set_status([tr], tr.run, CANCELLED, end_time=now_ms())


def _task_run_cancel_if_run_ended(task_run_id: str) -> None:
    """A queued task run of a cancelled or failed run never starts: close it instead of leaving it
    queued (it was queued by an upstream completion racing the cancel or failure)."""
    with transaction.atomic():
        tr = (
            TaskRun.objects.select_related("run")
            .filter(pk=task_run_id, status=QUEUED, run__status__in=(CANCELLED, FAILED))
            .first()
        )
        if tr is not None:
            task_runs_set_status([tr], tr.run, CANCELLED, end_time=now_ms())
