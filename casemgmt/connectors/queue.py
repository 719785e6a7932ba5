"""Sends the connectors app's Celery jobs by task name. `tasks.py` registers the tasks under these
names and imports the outbox (`delivery.py`); the outbox sends through this module, which imports
neither, so the two never import each other."""

from __future__ import annotations

from typing import Any

from celery import current_app
from django.conf import settings

SEND_TASK = "casemgmt.connectors.send_delivery"
SWEEP_TASK = "casemgmt.connectors.deliveries_sweep"


def enqueue_delivery(delivery_id: Any, *, countdown: float = 0) -> None:
    """Raises when the broker is down: callers after a commit use a robust on-commit hook, and the
    sweep sends a due row later."""
    current_app.send_task(
        SEND_TASK, args=[str(delivery_id)], countdown=countdown or None, queue=settings.CONNECTOR_QUEUE
    )
