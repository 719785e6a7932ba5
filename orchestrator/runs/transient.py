"""Database calls made by an agent while it runs an attempt: transient errors (an outage, a dropped
connection) are waited out or tolerated, never allowed to lose an outcome or kill a command."""

from __future__ import annotations

import contextlib
import logging
import time

from django.db import InterfaceError, OperationalError, connection

from shared import backoff

logger = logging.getLogger(__name__)
# The database errors of an outage or a dropped connection, worth waiting out; others are bugs.
TRANSIENT = (OperationalError, InterfaceError)
RETRY_FIRST_SECONDS, RETRY_MAX_SECONDS = 0.5, 10.0


def _reset_connection() -> None:
    """A connection that failed is dropped, so the next query connects afresh."""
    with contextlib.suppress(*TRANSIENT):
        connection.close()


def tolerate(fn, what: str):
    """A periodic database call while a command runs: on a transient error the command goes on,
    and the call is simply made again at its next turn. Returns None when it failed."""
    try:
        return fn()
    except TRANSIENT as exc:
        logger.warning("%s failed (%s); trying again at the next turn", what, exc)
        _reset_connection()
        return None


def retry_transient(fn, *, what: str, give_up_after: float | None = None):
    """Calls `fn`, waiting out transient database errors with exponential backoff (0.5 s doubling
    to 10 s), for ever or until `give_up_after` seconds have passed (then the error is raised)."""
    deadline = None if give_up_after is None else time.monotonic() + give_up_after
    attempt = 0
    while True:
        try:
            return fn()
        except TRANSIENT as exc:
            attempt += 1
            delay = backoff.exponential(attempt, base=RETRY_FIRST_SECONDS, cap=RETRY_MAX_SECONDS)
            if deadline is not None and time.monotonic() + delay > deadline:
                raise
            logger.warning("%s failed (%s); retrying in %.1f s", what, exc, delay)
            _reset_connection()
            time.sleep(delay)
