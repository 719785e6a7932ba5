"""Sends the vault's Celery jobs by task name. `tasks.py` registers the tasks under these names and
imports the erasure services; the services send through this module, which imports neither, so
the two never import each other."""

from __future__ import annotations

from typing import Any

from celery import current_app
from django.conf import settings

ERASURE_RUN_TASK = "casemgmt.vault.run_erasure"
ERASURES_SWEEP_TASK = "casemgmt.vault.erasures_sweep"


def enqueue_erasure(erasure_id: Any) -> None:
    """Raises when the broker is down: callers queue it with a robust on-commit hook, and the
    sweep resumes the job later."""
    current_app.send_task(ERASURE_RUN_TASK, args=[str(erasure_id)], queue=settings.ERASURE_QUEUE)


def enqueue_erasures_sweep() -> None:
    current_app.send_task(ERASURES_SWEEP_TASK, queue=settings.ERASURE_QUEUE)
