"""Brute-force protection for login.

Failed logins are counted per email and per client IP in fixed windows kept in the database (so
every web process sees the same counters, and a cache or Redis restart unlocks nobody). A window
starts with the first failure and lasts `AUTH_LOCKOUT_WINDOW_SECONDS`; once a counter reaches its
threshold every login for that email (or from that IP) is refused with 429 until the window ends,
even with the right password. Unknown emails are counted exactly like known ones, so the answer
never reveals which emails exist.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from casemgmt.accounts.models import LoginThrottle
from shared.api import errors


@dataclass(frozen=True)
class Subject:
    key: str
    threshold: int


def subjects(*, email: str, ip: str | None) -> list[Subject]:
    # Hash the email: the table then holds no addresses in clear.
    digest = hashlib.sha256(email.strip().lower().encode("utf-8")).hexdigest()
    found = [Subject(f"email:{digest}", settings.AUTH_LOCKOUT_EMAIL_FAILURES)]
    if ip:
        found.append(Subject(f"ip:{ip}"[:255], settings.AUTH_LOCKOUT_IP_FAILURES))
    return found


def check(items: list[Subject]) -> None:
    """429 with Retry-After while any counter of a current window is at its threshold."""
    now = timezone.now()
    windows = LoginThrottle.objects.filter(key__in=[item.key for item in items], window_ends_at__gt=now)
    counts = {row.key: row for row in windows}
    for item in items:
        row = counts.get(item.key)
        if row is not None and row.failures >= item.threshold:
            wait = math.ceil((row.window_ends_at - now).total_seconds())
            raise errors.RateLimited("Too many failed logins; try again later.", retry_after=max(1, wait))


@transaction.atomic
def record_failure(items: list[Subject]) -> None:
    now = timezone.now()
    ends_at = now + timedelta(seconds=settings.AUTH_LOCKOUT_WINDOW_SECONDS)
    for item in items:
        # The row lock serialises concurrent failures of one subject, so none is lost.
        row, created = LoginThrottle.objects.select_for_update().get_or_create(
            key=item.key, defaults={"failures": 1, "window_ends_at": ends_at}
        )
        if created:
            continue
        if row.window_ends_at <= now:  # the old window is over: this failure starts a new one
            row.failures, row.window_ends_at = 1, ends_at
        else:
            row.failures += 1
        row.save(update_fields=["failures", "window_ends_at"])


def clear_email(*, email: str) -> None:
    """A successful login forgives the email's earlier failures (not the IP's)."""
    LoginThrottle.objects.filter(key=subjects(email=email, ip=None)[0].key).delete()


def purge_expired() -> int:
    return LoginThrottle.objects.filter(window_ends_at__lte=timezone.now()).delete()[0]
