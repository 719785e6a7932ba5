"""Limit/offset paging with per-endpoint defaults and maxima."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from django.db import connections
from django.db.models import QuerySet
from django.http import QueryDict

from shared.api.errors import ValidationFailed

# Beyond any real collection here, and far below PostgreSQL's bigint OFFSET limit.
MAX_OFFSET = 10**9
# Lists count their matches exactly up to this many; past it `total` is PostgreSQL's estimate.
EXACT_TOTAL_UP_TO = 10_000


@dataclass(frozen=True)
class Page:
    limit: int
    offset: int


_INTEGER = re.compile(r"[+-]?[0-9]+")


def parse_int(params: QueryDict, name: str, default: int, *, minimum: int, maximum: int | None = None) -> int:
    raw = params.get(name)
    if raw in (None, ""):
        return default
    # int() also reads " 5", "5_0" and non-ASCII digits, which are not the documents' integer
    if not isinstance(raw, str) or not _INTEGER.fullmatch(raw):
        raise ValidationFailed(f"{name} must be an integer", field=name)
    value = int(raw) if len(raw.lstrip("+-0")) <= 18 else (-1 if raw.startswith("-") else 10**19)
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
        raise ValidationFailed(f"{name} must be {bound}", field=name)
    return value


def get_page(params: QueryDict, *, default_limit: int = 25, max_limit: int = 100) -> Page:
    """Out-of-range values are a 400 rather than silently clamped, so clients learn the bounds."""
    limit = parse_int(params, "limit", default_limit, minimum=1, maximum=max_limit)
    offset = parse_int(params, "offset", 0, minimum=0, maximum=MAX_OFFSET)
    return Page(limit=limit, offset=offset)


def list_body(key: str, items: list, total: int, page: Page) -> dict:
    """A list under its own key with the paging it was cut with: `{<key>: [...], total, limit, offset}`."""
    return {key: items, "total": total, "limit": page.limit, "offset": page.offset}


def page_links(request, page: Page, total: int) -> tuple[str | None, str | None]:
    """Absolute `next`/`prev` URLs for a page, or None at the ends."""

    def link(offset: int) -> str:
        # The same parameters in the same order (a copy() of GET would deep-copy every value).
        params = QueryDict(mutable=True, encoding=request.GET.encoding)
        for key, values in request.GET.lists():
            params.setlist(key, values)
        params["limit"] = str(page.limit)
        params["offset"] = str(offset)
        return request.build_absolute_uri(f"{request.path}?{params.urlencode()}")

    next_url = link(page.offset + page.limit) if page.offset + page.limit < total else None
    prev_url = link(max(0, page.offset - page.limit)) if page.offset > 0 else None
    return next_url, prev_url


def list_total(queryset: QuerySet[Any]) -> int:
    """`total` of a list: exact up to EXACT_TOTAL_UP_TO matches, beyond that (on PostgreSQL) the
    planner's row estimate, never less than what was counted.

    Counting a million matching rows takes a few hundred milliseconds however good the index (every
    entry is visited), on every page; the capped count stops early and the estimate costs one
    planning pass. Paging does not depend on it: callers decide `next` from the rows themselves."""
    unordered = queryset.order_by()
    counted = unordered[: EXACT_TOTAL_UP_TO + 1].count()
    if counted <= EXACT_TOTAL_UP_TO:
        return counted
    if connections[queryset.db].vendor != "postgresql":
        return unordered.count()
    plan = json.loads(unordered.values("pk").explain(format="json"))
    return max(int(plan[0]["Plan"]["Plan Rows"]), counted)


def next_link(request, page: Page, has_more: bool) -> str | None:
    """Absolute URL of the page after `page` when more rows follow (callers fetch limit + 1 rows)."""
    if not has_more:
        return None
    return page_links(request, page, page.offset + page.limit + 1)[0]
