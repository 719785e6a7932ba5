"""List conventions shared by the list endpoints (orchestrator defaults: limit 50, max 500;
`sort=<field>:<asc|desc>`, unknown fields 400)."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from uuid import UUID

from django.db.models import Q, QuerySet
from django.http import QueryDict
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.fields import empty

from shared.api.errors import ValidationFailed
from shared.api.openapi import one_of, page_parameters, query
from shared.api.pagination import Page, get_page
from shared.api.time import parse_iso

DEFAULT_LIMIT = 50
MAX_LIMIT = 500


def page_of(params: QueryDict) -> Page:
    return get_page(params, default_limit=DEFAULT_LIMIT, max_limit=MAX_LIMIT)


def list_parameters(*, sorts: dict[str, str] | None = None) -> list[OpenApiParameter]:
    """`limit`, `offset` and, for a list that sorts, `sort` as `page_of` and `QuerySortField` read them."""
    parameters = page_parameters(default_limit=DEFAULT_LIMIT, max_limit=MAX_LIMIT)
    if sorts:
        choices = [f"{field}{direction}" for field in sorts for direction in ("", ":asc", ":desc")]
        parameters.append(query("sort", one_of(*choices), "<field>[:asc|desc]"))
    return parameters


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


def paged(queryset: QuerySet, page: Page) -> tuple[list, int]:
    total = queryset.count()
    return list(queryset[page.offset : page.offset + page.limit]), total


# --- query parameters read by a view's nested FilterSerializer ---------------------------------


class QuerySerializer(serializers.Serializer):
    """A view's `FilterSerializer`: reads query parameters (their API spellings are its field
    names; `source=` gives the selector's keyword) into typed values. An empty parameter is an
    absent one; parameters it does not name are ignored. The first problem, in field order, is
    the 400: its message is the error itself, naming the parameter (`status must be one of ...`)."""

    def is_valid(self, *, raise_exception: bool = False) -> bool:
        valid = super().is_valid()
        if not valid and raise_exception:
            field, problems = next(iter(self.errors.items()))
            raise ValidationFailed(str(problems[0]), field=field)
        return valid


class QueryTextField(serializers.CharField):
    """Text as sent (`trim`: without surrounding whitespace); empty is absent."""

    def __init__(self, *, trim: bool = False, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        self.trim = trim
        super().__init__(trim_whitespace=False, **kwargs)

    def __deepcopy__(self, memo: Mapping[Any, Any]) -> QueryTextField:
        # DRF deep-copies a serializer's declared fields for every instance, by building each anew
        # from deep copies of its arguments: a quarter of a case list's CPU. A query field keeps no
        # state but its binding, which `bind` sets on the copy, and its arguments are never changed:
        # a shallow copy is the same field.
        return copy.copy(self)

    def run_validation(self, data: Any = empty) -> Any:
        if self.trim and isinstance(data, str):
            data = data.strip()
        if data in (empty, None, ""):
            return self.get_default() if self.default is not empty else None
        return data


class QueryChoiceField(QueryTextField):
    """One of `choices`, else `message`."""

    def __init__(self, *, choices: Iterable[str], message: str, **kwargs: Any) -> None:
        self.choices, self.message = tuple(choices), message
        super().__init__(**kwargs)

    def run_validation(self, data: Any = empty) -> Any:
        value = super().run_validation(data)
        if value is not None and value not in self.choices:
            raise serializers.ValidationError(self.message)
        return value


class QueryBooleanField(QueryTextField):
    """true/1/yes or false/0/no (any case)."""

    def run_validation(self, data: Any = empty) -> Any:
        value = super().run_validation(data)
        if not isinstance(value, str):
            return value
        if value.lower() in ("true", "1", "yes"):
            return True
        if value.lower() in ("false", "0", "no"):
            return False
        raise serializers.ValidationError(f"{self.field_name} must be true or false")


class QueryTimestampField(QueryTextField):
    """An ISO 8601 timestamp or date (a date is its midnight UTC), as a UTC datetime."""

    def run_validation(self, data: Any = empty) -> datetime | None:
        value = super().run_validation(data)
        try:
            return parse_iso(value, self.field_name or "")
        except ValidationFailed as exc:
            raise serializers.ValidationError(exc.message) from None


class QueryDateOrTimestampField(QueryTextField):
    """A bare date (`2026-01-31`) as a `date`, or an ISO 8601 timestamp as a UTC datetime."""

    def run_validation(self, data: Any = empty) -> date | datetime | None:
        value = super().run_validation(data)
        try:
            parsed = parse_iso(value, self.field_name or "")
        except ValidationFailed as exc:
            raise serializers.ValidationError(exc.message) from None
        return parsed.date() if parsed is not None and len(value) == 10 else parsed


class QueryExportFormatField(serializers.CharField):
    """An export's `format`: absent is json; empty or anything else is a 400."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, default="json", allow_blank=True, trim_whitespace=False, **kwargs)

    def run_validation(self, data: Any = empty) -> str:
        value = "json" if data is empty else data
        if value not in ("csv", "json"):
            raise serializers.ValidationError("format must be csv or json")
        return value


class QueryUUIDField(QueryTextField):
    """A UUID; `keywords` (like `me`) pass through as they are."""

    def __init__(self, *, keywords: tuple[str, ...] = (), **kwargs: Any) -> None:
        self.keywords = keywords
        super().__init__(**kwargs)

    def run_validation(self, data: Any = empty) -> UUID | str | None:
        value = super().run_validation(data)
        if value is None or value in self.keywords:
            return value
        try:
            return UUID(str(value))
        except ValueError:
            raise serializers.ValidationError(f"{self.field_name} must be a UUID") from None


@dataclass(frozen=True)
class Sort:
    """A list's order: a sort key of the selector and its direction."""

    field: str
    descending: bool = False

    def order_by(self, fields: dict[str, str]) -> list[str]:
        """`fields` maps sort keys to model fields; the primary key breaks ties."""
        return [f"{'-' if self.descending else ''}{fields[self.field]}", "pk"]


class QuerySortField(QueryTextField):
    """`sort=<field>[:asc|desc]` over `allowed` sort keys, as a `Sort`."""

    def __init__(self, *, allowed: Iterable[str], **kwargs: Any) -> None:
        self.allowed = tuple(allowed)
        super().__init__(**kwargs)

    def run_validation(self, data: Any = empty) -> Sort | None:
        raw = super().run_validation(data)
        if raw is None:
            return None
        field, _, direction = raw.partition(":")
        direction = direction or "asc"
        if field not in self.allowed:
            raise serializers.ValidationError(f"sort field must be one of {', '.join(sorted(self.allowed))}")
        if direction not in ("asc", "desc"):
            raise serializers.ValidationError("sort direction must be asc or desc")
        return Sort(field, descending=direction == "desc")


class QueryIntegerField(QueryTextField):
    """An integer from `minimum` to `maximum` (inclusive)."""

    def __init__(self, *, minimum: int, maximum: int | None = None, **kwargs: Any) -> None:
        self.minimum, self.maximum = minimum, maximum
        super().__init__(**kwargs)

    def run_validation(self, data: Any = empty) -> int | None:
        raw = super().run_validation(data)
        if raw is None:
            return None
        name, low, high = self.field_name, self.minimum, self.maximum
        try:
            value = int(raw)
        except ValueError:
            raise serializers.ValidationError(f"{name} must be an integer") from None
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise serializers.ValidationError(f"{name} must be {bound}")
        return value
