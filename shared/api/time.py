"""Timestamps as both APIs write them: ISO 8601 UTC with a `Z`, millisecond precision."""

from __future__ import annotations

from datetime import UTC, datetime

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from shared.api.errors import ValidationFailed


def iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    value = value.astimezone(UTC)
    # Not strftime: glibc's %Y writes year 563 as "563", which is not ISO 8601 (four digits).
    return (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d}T{value.hour:02d}:{value.minute:02d}:"
        f"{value.second:02d}.{value.microsecond // 1000:03d}Z"
    )


def now_ms() -> datetime:
    now = timezone.now()
    return now.replace(microsecond=(now.microsecond // 1000) * 1000)


def parse_iso(raw: str | None, field: str) -> datetime | None:
    if raw in (None, ""):
        return None
    value = None
    try:
        value = parse_datetime(raw.replace(" ", "+"))  # '+' in a query string arrives as a space
        if value is None and len(raw) == 10:
            value = parse_datetime(raw + "T00:00:00Z")
    except ValueError:
        value = None
    if value is None:
        raise ValidationFailed(f"{field} must be an ISO 8601 timestamp", field=field)
    if timezone.is_naive(value):
        value = timezone.make_aware(value, UTC)
    return _in_utc(value)


def _in_utc(value: datetime) -> datetime:
    """The same instant in UTC: ISO 8601 allows offsets up to 23:59, PostgreSQL refuses those beyond
    15:59 (a 400 for a valid timestamp). An instant that leaves the years 1-9999 on the way becomes
    the nearest one inside them, which filters the same."""
    try:
        return value.astimezone(UTC)
    except OverflowError:
        return (datetime.min if value.year == 1 else datetime.max).replace(tzinfo=UTC)
