"""Celery tasks of the vault: erasure jobs, and the sweep that resumes jobs whose worker vanished."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.signals import worker_ready

from casemgmt.tenancy.background import row_task, system_task
from casemgmt.vault import queue
from casemgmt.vault.erasure import erasure_run, erasures_resumable
from casemgmt.vault.models import Erasure


@shared_task(name=queue.ERASURE_RUN_TASK, ignore_result=True)
@row_task(Erasure)
def run_erasure(erasure_id: str) -> None:
    # Idempotent: the job is claimed with a conditional UPDATE and resumes at its first undone step.
    erasure_run(erasure_id=erasure_id)


@shared_task(name=queue.ERASURES_SWEEP_TASK, ignore_result=True)
@system_task("selects abandoned erasure jobs of every tenant and queues each; a job runs in its tenant")
def erasures_sweep() -> int:
    ids = erasures_resumable()
    for erasure_id in ids:
        queue.enqueue_erasure(erasure_id)
    return len(ids)


@worker_ready.connect
def resume_on_worker_start(sender: Any = None, **kwargs: Any) -> None:
    """A worker that starts (a restart after a crash, most often) picks up abandoned jobs at once
    rather than at the next sweep."""
    queue.enqueue_erasures_sweep()
