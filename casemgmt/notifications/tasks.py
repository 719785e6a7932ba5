"""Celery tasks of the notifications app: ids in, idempotent through the row's status."""

from __future__ import annotations

import smtplib

from celery import shared_task
from django.conf import settings

from casemgmt.notifications import queue
from casemgmt.notifications.models import Notification
from casemgmt.notifications.services import NotificationRetry, notification_send, notifications_pending
from casemgmt.tenancy.background import row_task, system_task


@shared_task(
    name=queue.SEND_TASK,
    ignore_result=True,
    autoretry_for=(smtplib.SMTPException, OSError, NotificationRetry),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=5,
)
@row_task(Notification)
def send_notification(notification_id: int) -> str:
    return notification_send(notification_id=notification_id)


@shared_task(name=queue.SWEEP_TASK, ignore_result=True)
@system_task("selects pending notifications of every tenant and queues each; the send runs in its tenant")
def notifications_sweep() -> int:
    """The safety net: re-sends jobs for rows still pending well after they were written."""
    pending = notifications_pending(older_than_seconds=settings.NOTIFICATIONS_SCAN_SECONDS)
    for notification_id in pending:
        queue.enqueue_notification(notification_id)
    return len(pending)
