"""Runs one attempt of a task run on an agent: claims it (its own, or the queue's best when priorities
or pools order the queue), runs its command (runs.command), records the outcome whatever the
database's state, and wakes whoever waits for a pool slot it freed."""

from __future__ import annotations

from django.conf import settings

from orchestrator.runs import claim, claiming, finish, pools
from orchestrator.runs.command import CommandRunner
from orchestrator.runs.transient import TRANSIENT, retry_transient, tolerate


def _claim(*, task_run_id: str, attempt: int, agent_id: str, agent_session: str) -> claim.Execution | None:
    """The claim, retried through a database outage for up to AGENT_STALE_SECONDS (then the
    message is dropped and the sweeper re-sends the wake-up). A claim whose commit succeeded but
    whose answer was lost is found again by its session, never left running without its agent."""
    failed = False

    def attempt_claim():
        nonlocal failed
        try:
            execution = claim.task_run_claim(
                task_run_id=task_run_id, attempt=attempt, agent_id=agent_id, agent_session=agent_session
            )
        except TRANSIENT:
            failed = True
            raise
        if execution is None and failed and agent_session:
            return claim.task_run_claimed_by(
                task_run_id=task_run_id, attempt=attempt + 1, agent_session=agent_session
            )
        return execution

    return retry_transient(
        attempt_claim, what=f"Claim of {task_run_id}", give_up_after=settings.AGENT_STALE_SECONDS
    )


def execute(*, task_run_id: str, attempt: int, agent_id: str, agent_session: str = "") -> str | None:
    """Claims and runs one attempt. Returns the task run's resulting status, or None when the
    message was stale, a duplicate, or the task run was cancelled meanwhile. The outcome is
    recorded whatever the database's state: its writes are retried until they succeed."""
    execution = _claim(
        task_run_id=task_run_id, attempt=attempt, agent_id=agent_id, agent_session=agent_session
    )
    if execution is None:
        # Priorities or pools order the queue: the message claims the queue's best task run instead.
        # Not retried: a failed attempt leaves the message to the sweeper's re-sent wake-ups.
        execution = tolerate(
            lambda: claiming.task_run_claim_next(
                task_run_id=task_run_id, attempt=attempt, agent_id=agent_id, agent_session=agent_session
            ),
            "Claim of the queue's next task run",
        )
    if execution is None:
        return None
    status = _run(execution)
    if execution.pool:  # a slot of the pool is free again: wake whoever waits for it
        tolerate(lambda: pools.pool_wake(pool=execution.pool or ""), "Pool wake-up")
    return status


def _run(execution: claim.Execution) -> str | None:
    task_run_id = execution.task_run_id
    outcome = CommandRunner(execution).run()
    if outcome.cancelled:
        retry_transient(
            lambda: claim.task_run_close_cancelled(task_run_id=task_run_id, attempt=execution.attempt),
            what=f"Closing cancelled {task_run_id}",
        )
        return None
    return retry_transient(
        lambda: finish.task_run_finish(
            task_run_id=task_run_id,
            attempt=execution.attempt,
            ok=outcome.ok,
            exit_code=outcome.exit_code,
            retryable=outcome.retryable,
            note=outcome.note,
            run_id=execution.run_id,
            execution=execution,
        ),
        what=f"Recording the outcome of {task_run_id}",
    )
