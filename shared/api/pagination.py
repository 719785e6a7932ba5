"""Limit/offset paging with per-endpoint defaults and maxima."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import QueryDict

from shared.api.errors import ValidationFailed

# Beyond any real collection here, and far below PostgreSQL's bigint OFFSET limit.
MAX_OFFSET = 10**9


@dataclass(frozen=True)
class Page:
    limit: int
    offset: int


def parse_int(params: QueryDict, name: str, default: int, *, minimum: int, maximum: int | None = None) -> int:
    raw = params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise ValidationFailed(f"{name} must be an integer", field=name) from None
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
        params = request.GET.copy()
        params["limit"] = str(page.limit)
        params["offset"] = str(offset)
        return request.build_absolute_uri(f"{request.path}?{params.urlencode()}")

    next_url = link(page.offset + page.limit) if page.offset + page.limit < total else None
    prev_url = link(max(0, page.offset - page.limit)) if page.offset > 0 else None
    return next_url, prev_url
