"""Celery tasks of the vault: erasure jobs, and the scan that resumes jobs whose worker vanished."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from casemgmt.tenancy.background import row_task, system_task
from casemgmt.vault.erasure import erasure_run, erasures_resumable
from casemgmt.vault.models import Erasure


@shared_task(name="casemgmt.vault.run_erasure", ignore_result=True)
@row_task(Erasure)
def run_erasure(erasure_id: str) -> None:
    # Idempotent: the job is claimed with a conditional UPDATE and resumes at its first undone step.
    erasure_run(erasure_id=erasure_id)


def enqueue_erasure(erasure_id: Any) -> None:
    run_erasure.apply_async(args=[str(erasure_id)], queue=settings.ERASURE_QUEUE)


@shared_task(name="casemgmt.vault.resume_erasures", ignore_result=True)
@system_task("selects abandoned erasure jobs of every tenant and queues each; a job runs in its tenant")
def resume_erasures() -> int:
    ids = erasures_resumable()
    for erasure_id in ids:
        enqueue_erasure(erasure_id)
    return len(ids)


@worker_ready.connect
def resume_on_worker_start(sender: Any = None, **kwargs: Any) -> None:
    """A worker that starts (a restart after a crash, most often) picks up abandoned jobs at once
    rather than at the next periodic scan."""
    resume_erasures.apply_async(queue=settings.ERASURE_QUEUE)
