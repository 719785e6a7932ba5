"""Bulk actions: one action over a list of items, each done as its own request would be.

Every item runs in its own transaction (the service it calls owns it), so one failure rolls back
that item alone; the failures are reported per item in the error family's codes and messages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from shared.api.errors import ApplicationError, ValidationFailed

# At most this many items per bulk request (a list longer, or a filter matching more, is a 400).
BULK_MAX = 1000

Item = TypeVar("Item")


def bulk_run(
    items: Iterable[Item], action: Callable[[Item], object], describe: Callable[[Item], dict[str, Any]]
) -> dict[str, Any]:
    """`{matched, succeeded, failed: [{...describe(item), code, message}]}`."""
    matched, succeeded, failed = 0, 0, []
    for item in items:
        matched += 1
        try:
            action(item)
        except ApplicationError as exc:
            failed.append({**describe(item), "code": exc.code, "message": exc.message})
        else:
            succeeded += 1
    return {"matched": matched, "succeeded": succeeded, "failed": failed}


def check_count(count: int, field: str) -> None:
    if count > BULK_MAX:
        raise ValidationFailed(f"at most {BULK_MAX} items per bulk request", field=field)


def one_of_list_or_filter(data: dict[str, Any], list_field: str) -> None:
    """Exactly one of the explicit list and `filter`."""
    if (data.get(list_field) is None) == (data.get("filter") is None):
        raise ValidationFailed(f"give exactly one of {list_field} and filter", field=list_field)


def as_query(values: dict[str, Any]) -> dict[str, str]:
    """A JSON `filter` object as the query parameters it stands for (values as their text)."""
    out: dict[str, str] = {}
    for key, value in values.items():
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif value is not None:
            out[key] = str(value)
    return out
