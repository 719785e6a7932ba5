"""Email notifications about human tasks.

`task_notify` runs inside the transaction that assigned or escalated the task: it writes one
`Notification` row per (task, event, recipient) and, after commit, hands its id to a worker. The
worker's `notification_send` claims the row with a conditional UPDATE, so a redelivered job or a
second worker sends nothing.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from casemgmt.accounts.models import User
from casemgmt.accounts.selectors import PREFERENCE_DEFAULTS
from casemgmt.notifications import queue
from casemgmt.notifications.emails import notification_email
from casemgmt.notifications.models import Notification
from casemgmt.notifications.transport import TransportUnusable, transport_for

if TYPE_CHECKING:
    from casemgmt.workflows.models import CaseStep


def wants_email(user: User) -> bool:
    """An active human with an address whose `emailNotifications` preference is on (default on)."""
    if user.kind != User.KIND_HUMAN or not user.is_active or not user.email:
        return False
    return (user.preferences or {}).get(
        "emailNotifications", PREFERENCE_DEFAULTS["emailNotifications"]
    ) is True


def task_notify(*, row: CaseStep, event: str, recipient: User | None, actor: str) -> Notification | None:
    """Queues an email to `recipient` about `row` unless it did this itself, or wants none."""
    if recipient is None or str(recipient.id) == actor or not wants_email(recipient):
        return None
    notification, created = Notification.objects.get_or_create(
        step=row, event=event, recipient=recipient, defaults={"tenant_id": row.tenant_id}
    )
    if not created:
        return None  # this event already reached this person for this task
    # robust: a broker outage after commit is logged, not answered as an error; the periodic scan
    # of pending notifications sends it.
    transaction.on_commit(lambda: queue.enqueue_notification(notification.id), robust=True)
    return notification


def _claim(notification_id: int) -> bool:
    return bool(
        Notification.objects.filter(pk=notification_id, status=Notification.PENDING).update(
            status=Notification.SENDING, attempts=F("attempts") + 1
        )
    )


class NotificationRetry(Exception):
    """A temporary failure outside SMTP itself (the mail server's name did not resolve): retried."""


def _give_back(notification_id: int, exc: BaseException) -> None:
    # The claim goes back (pending) so the retry, or the periodic scan, can send.
    Notification.objects.filter(pk=notification_id).update(
        status=Notification.PENDING, last_error=f"{exc.__class__.__name__}: {exc}"[:2000]
    )


def _deliver(notification: Notification) -> None:
    transport = transport_for(tenant_id=notification.tenant_id)
    message = notification_email(notification, from_email=transport.from_email)
    if transport.connection is None:
        message.send()
    else:
        with transport.connection as connection:
            connection.send_messages([message])


def notification_send(*, notification_id: int) -> str:
    """Sends one pending notification; returns its final status. On a temporary error the claim is
    given back and the error re-raised, so the task's retry can send."""
    if not _claim(notification_id):
        return "not pending"
    notification = Notification.objects.select_related("recipient", "tenant", "step__case__case_type").get(
        pk=notification_id
    )
    if not wants_email(notification.recipient):  # turned off (or disabled) since it was queued
        Notification.objects.filter(pk=notification_id).update(status=Notification.SKIPPED)
        return Notification.SKIPPED
    try:
        _deliver(notification)
    except TransportUnusable as exc:
        if exc.transient:
            _give_back(notification_id, exc)
            raise NotificationRetry(str(exc)) from exc
        # A refused SMTP host or an unreadable configuration does not mend itself: no retry.
        Notification.objects.filter(pk=notification_id).update(
            status=Notification.FAILED, last_error=str(exc)[:2000]
        )
        return Notification.FAILED
    except Exception as exc:
        _give_back(notification_id, exc)
        raise
    Notification.objects.filter(pk=notification_id).update(status=Notification.SENT, sent_at=timezone.now())
    return Notification.SENT


def notifications_pending(*, older_than_seconds: float) -> list[int]:
    """Pending rows whose job was lost (broker restart, a crash before enqueueing), for the scan."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    rows = Notification.objects.filter(status=Notification.PENDING, created_at__lt=cutoff)
    return list(rows.order_by("created_at").values_list("pk", flat=True)[:500])
