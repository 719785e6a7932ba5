"""Brute-force protection for login.

Failed logins are counted per email and per client IP in fixed windows kept in the Django cache
(Redis in production and tests, so every web process sees the same counters). A window starts with
the first failure and lasts `AUTH_LOCKOUT_WINDOW_SECONDS`; once a counter reaches its threshold every
login for that email (or from that IP) is refused with 429 until the window ends, even with the right
password. Unknown emails are counted exactly like known ones, so the answer never reveals which
emails exist.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

from shared.api import errors

PREFIX = "auth:lockout:"


@dataclass(frozen=True)
class Subject:
    key: str
    threshold: int


def subjects(*, email: str, ip: str | None) -> list[Subject]:
    # Hash the email: cache keys must be safe, and Redis then holds no addresses in clear.
    digest = hashlib.sha256(email.strip().lower().encode("utf-8")).hexdigest()
    found = [Subject(f"{PREFIX}email:{digest}", settings.AUTH_LOCKOUT_EMAIL_FAILURES)]
    if ip:
        found.append(Subject(f"{PREFIX}ip:{ip}", settings.AUTH_LOCKOUT_IP_FAILURES))
    return found


def check(items: list[Subject]) -> None:
    """429 with Retry-After while any counter is at its threshold."""
    for item in items:
        if (cache.get(item.key) or 0) >= item.threshold:
            ends_at = cache.get(item.key + ":ends") or time.time() + 1
            raise errors.RateLimited(
                "Too many failed logins; try again later.", retry_after=math.ceil(ends_at - time.time())
            )


def record_failure(items: list[Subject]) -> None:
    window = settings.AUTH_LOCKOUT_WINDOW_SECONDS
    for item in items:
        # `add` only creates the counter when the window has no counter yet: the window is fixed.
        if cache.add(item.key, 0, timeout=window):
            cache.set(item.key + ":ends", time.time() + window, timeout=window)
        try:
            cache.incr(item.key)
        except ValueError:  # the window expired between add and incr
            cache.set(item.key, 1, timeout=window)
            cache.set(item.key + ":ends", time.time() + window, timeout=window)


def clear_email(*, email: str) -> None:
    """A successful login forgives the email's earlier failures (not the IP's)."""
    key = subjects(email=email, ip=None)[0].key
    cache.delete_many([key, key + ":ends"])


def client_ip(request) -> str | None:
    if settings.AUTH_TRUST_X_FORWARDED_FOR:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        if forwarded:
            return forwarded.split(",")[0].strip() or None
    return request.META.get("REMOTE_ADDR") or None
