"""List conventions shared by the list endpoints (orchestrator defaults: limit 50, max 500;
`sort=<field>:<asc|desc>`, unknown fields 400)."""

from __future__ import annotations

import re

from django.db.models import Q, QuerySet
from django.http import QueryDict
from drf_spectacular.utils import OpenApiParameter

from shared.api.errors import ValidationFailed
from shared.api.openapi import one_of, page_parameters, query
from shared.api.pagination import Page, get_page

DEFAULT_LIMIT = 50
MAX_LIMIT = 500


def page_of(params: QueryDict) -> Page:
    return get_page(params, default_limit=DEFAULT_LIMIT, max_limit=MAX_LIMIT)


def list_parameters(*, sorts: dict[str, str] | None = None) -> list[OpenApiParameter]:
    """`limit`, `offset` and, for a list that sorts, `sort` as `page_of` and `sort_order` read them."""
    parameters = page_parameters(default_limit=DEFAULT_LIMIT, max_limit=MAX_LIMIT)
    if sorts:
        choices = [f"{field}{direction}" for field in sorts for direction in ("", ":asc", ":desc")]
        parameters.append(query("sort", one_of(*choices), "<field>[:asc|desc]"))
    return parameters


def sort_order(params: QueryDict, *, allowed: dict[str, str], default: list[str]) -> list[str]:
    """`allowed` maps public field names to model fields; the primary key breaks ties."""
    raw = params.get("sort")
    if not raw:
        return default
    field, _, direction = raw.partition(":")
    direction = direction or "asc"
    if field not in allowed:
        raise ValidationFailed(f"sort field must be one of {', '.join(sorted(allowed))}", field="sort")
    if direction not in ("asc", "desc"):
        raise ValidationFailed("sort direction must be asc or desc", field="sort")
    prefix = "-" if direction == "desc" else ""
    return [f"{prefix}{allowed[field]}", "pk"]


def pattern_filter(raw: str | None, *fields: str) -> Q:
    """`filter` matches ids or names: a glob when it has `*`/`?`, otherwise a substring."""
    if not raw:
        return Q()
    query = Q()
    if any(ch in raw for ch in "*?"):
        regex = "^" + re.escape(raw).replace(r"\*", ".*").replace(r"\?", ".") + "$"
        for field in fields:
            query |= Q(**{f"{field}__iregex": regex})
    else:
        for field in fields:
            query |= Q(**{f"{field}__icontains": raw})
    return query


def parse_bool(params: QueryDict, name: str, default: bool = False) -> bool:
    raw = params.get(name)
    if raw in (None, ""):
        return default
    lowered = raw.lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise ValidationFailed(f"{name} must be true or false", field=name)


def paged(queryset: QuerySet, page: Page) -> tuple[list, int]:
    total = queryset.count()
    return list(queryset[page.offset : page.offset + page.limit]), total
