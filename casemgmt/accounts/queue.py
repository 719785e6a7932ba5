"""Sends the accounts app's Celery jobs by task name. `tasks.py` registers the tasks under these
names and imports the services; the services send through this module, which imports neither,
so the two never import each other."""

from __future__ import annotations

import logging

from celery import current_app
from django.conf import settings
from kombu.exceptions import OperationalError

logger = logging.getLogger(__name__)
WELCOME_EMAIL_TASK = "casemgmt.accounts.send_welcome_email"
SECURITY_STATE_PURGE_TASK = "casemgmt.accounts.purge_expired_security_state"


def enqueue_welcome_email(user_id: str) -> None:
    """Runs after commit, when the principal exists: a broker outage must not turn that into an
    error answer. The email is then not sent, and the log says so."""
    try:
        current_app.send_task(WELCOME_EMAIL_TASK, args=[user_id], queue=settings.ACCOUNTS_EMAIL_QUEUE)
    except (OperationalError, OSError) as exc:
        logger.warning("Broker unavailable (%s): welcome email for %s not queued", exc, user_id)
