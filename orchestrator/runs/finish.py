"""An attempt's outcome recorded: completed, back to `queued` for a retry, or failed (its run with it),
and the recovery of an attempt whose agent process stopped heartbeating.

Every transition is a conditional UPDATE on (status = running, attempts = this attempt), so a late
outcome of an attempt that was cancelled or recovered meanwhile changes nothing. A failure is a
run-level change: it locks the run row first, then the task run's (the order of runs.state).
"""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.db.models import F

from orchestrator.runs.claim import Execution
from orchestrator.runs.completion import task_run_complete
from orchestrator.runs.models import FAILED, OPEN, QUEUED, RUNNING, TaskLogLine, TaskRun
from orchestrator.runs.state import run_fail, run_lock, task_runs_set_status
from orchestrator.runs.wakeups import Wakeup, send_on_commit
from shared.api.time import now_ms


def task_run_finish(
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
        return _task_run_fail_or_retry(task_run_id, attempt, run_id, exit_code, retryable, note)
    return task_run_complete(task_run_id=task_run_id, attempt=attempt, run_id=run_id, execution=execution)


@transaction.atomic
def _task_run_fail_or_retry(
    task_run_id: str, attempt: int, run_id: str, exit_code, retryable: bool, note: str
) -> str | None:
    run = run_lock(run_id)
    tr = TaskRun.objects.filter(pk=task_run_id, status=RUNNING, attempts=attempt).first()
    if tr is None:
        return None
    now = now_ms()
    if note:
        task_run_log_append(tr, [note])
    if retryable and tr.attempts < tr.max_attempts and run.status in OPEN:
        delay = tr.retry_delay_seconds
        task_runs_set_status(
            [tr], run, QUEUED, end_time=now, exit_code=exit_code, agent_id=None, agent_session=None,
            queued_at=now, dispatched_at=now, not_before=now + timedelta(seconds=delay),
        )  # fmt: skip
        send_on_commit([Wakeup(tr.id, tr.queue, tr.attempts, countdown=delay)])
        return QUEUED
    task_runs_set_status([tr], run, FAILED, end_time=now, exit_code=exit_code)
    run_fail(run, now)
    return FAILED


@transaction.atomic
def task_run_recover(*, task_run_id: str, attempt: int, agent_id: str) -> str | None:
    """An attempt held by an agent process that stopped heartbeating: retried if the task run has
    attempts left, else failed. Never left `running`. Conditional on the attempt, so an attempt
    claimed meanwhile by a live process is left alone."""
    tr = TaskRun.objects.filter(pk=task_run_id, status=RUNNING, attempts=attempt).first()
    if tr is None:
        return None
    note = f"[orchestrator] agent {agent_id} stopped responding; attempt {tr.attempts} abandoned"
    return task_run_finish(task_run_id=tr.id, attempt=tr.attempts, ok=False, exit_code=None, note=note)


def task_run_log_append(tr: TaskRun, lines: list[str]) -> None:
    now = now_ms()
    TaskLogLine.objects.bulk_create([TaskLogLine(task_run=tr, at=now, line=line) for line in lines])
    size = sum(len(line.encode()) + 1 for line in lines)
    TaskRun.objects.filter(pk=tr.pk).update(log_bytes=F("log_bytes") + size)
