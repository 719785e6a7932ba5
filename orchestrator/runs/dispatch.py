"""Waking agents. Celery carries only (task run id, attempt); everything else is read from the
database by the agent, which claims the task run with a conditional UPDATE."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction


@dataclass(frozen=True)
class Wakeup:
    task_run_id: str
    queue: str
    attempt: int  # the task run's `attempts` when sent; a stale or duplicate message no longer matches
    countdown: float = 0.0


def send_now(wakeups: list[Wakeup]) -> None:
    # runs.tasks -> executor -> lifecycle -> dispatch: importing the task at the top would be a loop
    from orchestrator.runs.tasks import execute_task_run

    if not wakeups:
        return
    with execute_task_run.app.producer_or_acquire() as producer:
        for w in wakeups:
            execute_task_run.apply_async(
                args=[w.task_run_id, w.attempt],
                queue=w.queue,
                countdown=w.countdown or None,
                producer=producer,
            )


def send_on_commit(wakeups: list[Wakeup]) -> None:
    if wakeups:
        transaction.on_commit(lambda: send_now(list(wakeups)))
