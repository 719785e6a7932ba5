"""Paging for console lists: `?page=N` (1-based) and the "x–y of N" line with links that keep the
list's other query parameters (its filters)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.http import QueryDict

from shared.api.pagination import Page

MAX_PER_PAGE = 200


@dataclass(frozen=True)
class Pager:
    items: Sequence[Any]
    number: int  # this page, 1-based
    per_page: int
    total: int
    query: QueryDict  # the request's query, from which the links are built
    param: str = "page"

    @property
    def first(self) -> int:
        return 0 if self.total == 0 else (self.number - 1) * self.per_page + 1

    @property
    def last(self) -> int:
        return min(self.number * self.per_page, self.total)

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    def _link(self, number: int) -> str:
        query = self.query.copy()
        query[self.param] = str(number)
        return "?" + query.urlencode()

    @property
    def previous_url(self) -> str | None:
        return self._link(self.number - 1) if self.number > 1 else None

    @property
    def next_url(self) -> str | None:
        return self._link(self.number + 1) if self.number < self.pages else None


def page_number(query: QueryDict, param: str = "page") -> int:
    """The requested page; anything that is not a positive whole number is the first page."""
    raw = str(query.get(param, "1"))
    return int(raw) if raw.isdigit() and int(raw) > 0 else 1


def paged(query: QueryDict, items: Any, per_page: int, *, param: str = "page") -> Pager:
    """A page of a queryset or list; a page past the end shows the last page."""
    per_page = max(1, min(per_page, MAX_PER_PAGE))
    total = items.count() if hasattr(items, "count") and not isinstance(items, list) else len(items)
    number = min(page_number(query, param), max(1, -(-total // per_page)))
    start = (number - 1) * per_page
    return Pager(list(items[start : start + per_page]), number, per_page, total, query, param)


def paged_by(
    query: QueryDict,
    fetch: Callable[[Page], tuple[Sequence[Any], int]],
    per_page: int,
    *,
    param: str = "page",
) -> Pager:
    """A page from a selector that pages itself (`fetch(Page)` -> (rows, total))."""
    per_page = max(1, min(per_page, MAX_PER_PAGE))
    number = page_number(query, param)
    rows, total = fetch(Page(limit=per_page, offset=(number - 1) * per_page))
    if not rows and total and number > 1:  # past the end: the last page
        number = max(1, -(-total // per_page))
        rows, total = fetch(Page(limit=per_page, offset=(number - 1) * per_page))
    return Pager(list(rows)[:per_page], number, per_page, total, query, param)
