"""The PostgreSQL functions a report query may call that SQLite lacks, as Python functions the
report connection registers (names prefixed `report_`, which the checker never lets a query name).

Timestamps on SQLite are text in one canonical form, `YYYY-MM-DD HH:MM:SS.ffffff` in UTC (what
Django stores, with the fraction always written), so comparing them as text orders them in time.
Intervals are numbers of seconds, as the answer gives them on PostgreSQL too.
"""

from __future__ import annotations

import calendar
import json
import math
import statistics
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

TS_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
MONTH_SECONDS = 30 * 86400  # PostgreSQL's epoch of an interval counts a month as 30 days
YEAR_SECONDS = 365.25 * 86400


def ts_text(value: datetime) -> str:
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value.strftime(TS_FORMAT)


def parse_ts(value: Any) -> datetime | None:
    """A timestamp from canonical text, a Django-stored one or any ISO 8601 text (an offset is
    converted to UTC); a date is its midnight. ValueError for anything else, as PostgreSQL
    refuses a malformed timestamp literal."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"invalid input syntax for type timestamp: {value!r}")
    parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    return parsed.astimezone(UTC).replace(tzinfo=None) if parsed.tzinfo else parsed


def report_ts(value: Any) -> str | None:
    parsed = parse_ts(value)
    return ts_text(parsed) if parsed else None


def report_shift(value: Any, months: int, seconds: float | None) -> str | None:
    """`timestamp + interval`: calendar months first (the day clamped to the month's end, as
    PostgreSQL does), then the seconds."""
    moment = parse_ts(value)
    if moment is None or seconds is None:
        return None
    if months:
        total = moment.year * 12 + moment.month - 1 + int(months)
        year, month = divmod(total, 12)
        day = min(moment.day, calendar.monthrange(year, month + 1)[1])
        moment = moment.replace(year=year, month=month + 1, day=day)
    return ts_text(moment + timedelta(seconds=seconds))


def report_age(later: Any, earlier: Any) -> float | None:
    a, b = parse_ts(later), parse_ts(earlier)
    return None if a is None or b is None else (a - b).total_seconds()


TRUNC_FIELDS = ("microseconds", "milliseconds", "second", "minute", "hour", "day")


def report_date_trunc(unit: str, value: Any) -> str | None:
    moment = parse_ts(value)
    if moment is None:
        return None
    unit = unit.lower()
    if unit in ("week", "month", "quarter", "year", "decade", "century"):
        moment = moment.replace(hour=0, minute=0, second=0, microsecond=0)
        if unit == "week":  # weeks start on Monday (ISO 8601)
            return ts_text(moment - timedelta(days=moment.weekday()))
        month = 1 if unit != "month" else moment.month
        if unit == "quarter":
            month = (moment.month - 1) // 3 * 3 + 1
        year = {"decade": moment.year // 10 * 10, "century": (moment.year - 1) // 100 * 100 + 1}
        return ts_text(moment.replace(year=year.get(unit, moment.year), month=month, day=1))
    if unit not in TRUNC_FIELDS:
        raise ValueError(f'unit "{unit}" not recognized for date_trunc')
    keep = {
        "milliseconds": {"microsecond": moment.microsecond // 1000 * 1000},
        "second": {"microsecond": 0},
        "minute": {"second": 0, "microsecond": 0},
        "hour": {"minute": 0, "second": 0, "microsecond": 0},
        "day": {"hour": 0, "minute": 0, "second": 0, "microsecond": 0},
    }
    return ts_text(moment.replace(**keep.get(unit, {})))  # type: ignore[arg-type]


def report_date_part(field: str, value: Any) -> float | None:
    """`extract`/`date_part` of a timestamp (text) or an interval (seconds)."""
    if value is None:
        return None
    field = field.lower()
    if isinstance(value, int | float):
        return _interval_part(field, float(value))
    moment = parse_ts(value)
    assert moment is not None
    parts: dict[str, float] = {
        "epoch": moment.replace(tzinfo=UTC).timestamp(),
        "year": moment.year,
        "quarter": (moment.month - 1) // 3 + 1,
        "month": moment.month,
        "week": moment.isocalendar()[1],
        "day": moment.day,
        "dow": moment.isoweekday() % 7,
        "isodow": moment.isoweekday(),
        "doy": moment.timetuple().tm_yday,
        "hour": moment.hour,
        "minute": moment.minute,
        "second": moment.second + moment.microsecond / 1e6,
    }
    if field not in parts:
        raise ValueError(f'unit "{field}" not supported for timestamp')
    return parts[field]


def _interval_part(field: str, seconds: float) -> float:
    sign, seconds = math.copysign(1, seconds), abs(seconds)
    parts = {
        "epoch": seconds,
        "day": seconds // 86400,
        "hour": seconds % 86400 // 3600,
        "minute": seconds % 3600 // 60,
        "second": seconds % 60,
    }
    if field not in parts:
        raise ValueError(f'unit "{field}" not supported for interval')
    return sign * parts[field]


def report_concat(*values: Any) -> str:
    return "".join(str(v) for v in values if v is not None)  # NULLs are skipped, as in PostgreSQL


def report_json_text(value: Any) -> str | None:
    """`->>` on JSON text from SQLite's `->`: a string unquoted, JSON null as NULL, anything else
    as its JSON text (`true`, `2.5`, `{"a": 1}`)."""
    if value is None:
        return None
    parsed = json.loads(value)
    if parsed is None:
        return None
    return parsed if isinstance(parsed, str) else value


def report_jsonb_typeof(value: Any) -> str | None:
    if value is None:
        return None
    parsed = json.loads(value)
    for kind, name in ((bool, "boolean"), (str, "string"), (int | float, "number"), (list, "array")):
        if isinstance(parsed, kind):
            return name
    return "object" if isinstance(parsed, dict) else "null"


BOOLEAN_WORDS = {"t": 1, "true": 1, "y": 1, "yes": 1, "on": 1, "1": 1, "f": 0, "false": 0, "n": 0}
BOOLEAN_WORDS.update({"no": 0, "off": 0, "0": 0})


def report_bool(value: Any) -> int | None:
    if value is None:
        return None
    word = str(value).strip().lower()
    if word not in BOOLEAN_WORDS:
        raise ValueError(f'invalid input syntax for type boolean: "{value}"')
    return BOOLEAN_WORDS[word]


class Stddev:
    """The sample standard deviation (`stddev`); NULL below two values."""

    def __init__(self) -> None:
        self.values: list[float] = []

    def step(self, value: Any) -> None:
        if value is not None:
            self.values.append(float(value))

    def finalize(self) -> float | None:
        return statistics.stdev(self.values) if len(self.values) > 1 else None


class PercentileCont:
    """`percentile_cont(fraction) WITHIN GROUP (ORDER BY value)`: linear interpolation."""

    def __init__(self) -> None:
        self.values: list[float] = []
        self.fraction = 0.5

    def step(self, value: Any, fraction: float) -> None:
        if not 0 <= fraction <= 1:
            raise ValueError(f"percentile value {fraction} is not between 0 and 1")
        self.fraction = fraction
        if value is not None:
            self.values.append(float(value))

    def finalize(self) -> float | None:
        if not self.values:
            return None
        ordered = sorted(self.values)
        position = self.fraction * (len(ordered) - 1)
        low, high = math.floor(position), math.ceil(position)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


SCALARS: dict[str, tuple[Callable[..., Any], int]] = {
    "report_ts": (report_ts, 1),
    "report_shift": (report_shift, 3),
    "report_age": (report_age, 2),
    "report_date_trunc": (report_date_trunc, 2),
    "report_date_part": (report_date_part, 2),
    "report_concat": (report_concat, -1),
    "report_json_text": (report_json_text, 1),
    "report_jsonb_typeof": (report_jsonb_typeof, 1),
    "report_bool": (report_bool, 1),
}
AGGREGATES: dict[str, tuple[Any, int]] = {
    "report_stddev": (Stddev, 1),
    "report_percentile": (PercentileCont, 2),
}
