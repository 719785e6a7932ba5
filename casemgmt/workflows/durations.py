"""ISO 8601 durations and times for `timer` steps.

Durations take weeks, days, hours, minutes and seconds (`P2D`, `PT48H`, `PT1M30S`, `P1W`); years
and months are refused, since their length depends on the calendar and a timer should say what it
waits. A time (`until`) must carry its offset (`Z` or `+02:00`): a time without one would be read
in whatever zone the server runs in.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

_DURATION = re.compile(
    r"^P(?:(?P<weeks>\d+)W)?(?:(?P<days>\d+)D)?"
    r"(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?$"
)
# A timer waits at most ten years, as `slaHours` does: more overflows datetime arithmetic.
MAX_DURATION = timedelta(days=3650)


def parse_duration(text: str) -> timedelta:
    """The duration, or ValueError saying why not."""
    match = _DURATION.match(text) if isinstance(text, str) else None
    if match is None or text in ("P", "PT") or text.endswith("T"):
        raise ValueError("must be an ISO 8601 duration of weeks, days, hours, minutes, seconds (e.g. PT48H)")
    parts = {name: float(value) for name, value in match.groupdict().items() if value}
    duration = timedelta(**parts)
    if duration > MAX_DURATION:
        raise ValueError("must be at most 10 years")
    return duration


def parse_time(text: str) -> datetime:
    """An aware datetime from an ISO 8601 time with an offset, or ValueError saying why not."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        raise ValueError(f"{text!r} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise ValueError(f"{text!r} has no offset (add Z or +hh:mm)")
    return moment
