"""Sends the notifications app's Celery jobs by task name. `tasks.py` registers the tasks under
these names and imports the services; the services send through this module, which imports
neither, so the two never import each other."""

from __future__ import annotations

from celery import current_app
from django.conf import settings

SEND_TASK = "casemgmt.notifications.send_notification"
SWEEP_TASK = "casemgmt.notifications.notifications_sweep"


def enqueue_notification(notification_id: int) -> None:
    """Raises when the broker is down: callers queue it with a robust on-commit hook, and the
    sweep sends a row still pending later."""
    current_app.send_task(SEND_TASK, args=[notification_id], queue=settings.NOTIFICATIONS_QUEUE)
