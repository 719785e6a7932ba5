"""Timestamps both APIs write: ISO 8601 UTC with `Z`, milliseconds, and always a four-digit year."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from shared.api.time import iso


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (datetime(563, 12, 23, 5, 11, 34, 624999, tzinfo=UTC), "0563-12-23T05:11:34.624Z"),
        (datetime(15, 9, 18, 4, 52, 47, tzinfo=UTC), "0015-09-18T04:52:47.000Z"),
        (datetime(1, 1, 1, tzinfo=UTC), "0001-01-01T00:00:00.000Z"),
        (datetime(2026, 11, 27, 23, 30, tzinfo=timezone(timedelta(hours=-2))), "2026-11-28T01:30:00.000Z"),
        (datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), "9999-12-31T23:59:59.999Z"),
    ],
)
def test_iso_writes_four_digit_years_in_utc(value, text):
    assert iso(value) == text
