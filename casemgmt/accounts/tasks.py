from __future__ import annotations

import smtplib

from celery import shared_task
from django.utils import timezone

from casemgmt.accounts import lockout, queue
from casemgmt.accounts.models import User
from casemgmt.accounts.services import welcome_email_build
from casemgmt.accounts.tokens import purge_expired_revocations
from casemgmt.tenancy.background import row_task, system_task


@shared_task(
    name=queue.WELCOME_EMAIL_TASK,
    ignore_result=True,
    autoretry_for=(smtplib.SMTPException, OSError),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=5,
)
@row_task(User)
def send_welcome_email(user_id: str) -> None:
    # Idempotent: the conditional UPDATE claims the send, so a redelivered task sends nothing.
    claimed = User.objects.filter(pk=user_id, is_active=True, welcome_sent_at__isnull=True).update(
        welcome_sent_at=timezone.now()
    )
    if not claimed:
        return
    user = User.objects.select_related("tenant__branding").get(pk=user_id)
    try:
        welcome_email_build(user).send()
    except Exception:
        # Give the claim back so the retry can send.
        User.objects.filter(pk=user_id).update(welcome_sent_at=None)
        raise


@shared_task(name=queue.SECURITY_STATE_PURGE_TASK, ignore_result=True)
@system_task("deletes expired revocations and login throttles, tables that hold no tenant column")
def purge_expired_security_state() -> None:
    # Idempotent: deletes only rows whose time is over; a revoked token past its expiry fails the
    # signature check on its own, and an ended lockout window counts for nothing.
    purge_expired_revocations()
    lockout.purge_expired()
