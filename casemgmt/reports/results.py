"""What a report query hands back, whichever database ran it: row objects with JSON values."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.conf import settings

from shared.api.errors import ValidationFailed


@dataclass(frozen=True)
class QueryResult:
    rows: list[dict[str, Any]]
    truncated: bool  # more rows than the cap: only the first `cap` are in `rows`


def unique_names(names: Iterable[str]) -> list[str]:
    """Column names as the query gave them; a repeated name gets a suffix (`id`, `id_2`) so no
    value is lost in the row objects."""
    seen: list[str] = []
    for original in names:
        name, n = original, 1
        while name in seen:
            n += 1
            name = f"{original}_{n}"
        seen.append(name)
    return seen


def json_value(value: Any) -> Any:
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal | float) and not math.isfinite(value):
        return str(float(value))  # JSON has no NaN or Infinity: "nan", "inf", "-inf"
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, list):
        return [json_value(v) for v in value]
    if isinstance(value, bytes | memoryview):
        return bytes(value).hex()
    return value


def timeout_error() -> ValidationFailed:
    """The same answer whether PostgreSQL's statement timeout or SQLite's progress handler stopped
    the query."""
    timeout = settings.REPORTS_STATEMENT_TIMEOUT_MS
    return ValidationFailed(
        f"The query ran longer than {timeout} ms and was stopped.", field="query", code="query_timeout"
    )
