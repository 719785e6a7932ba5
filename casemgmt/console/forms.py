"""A task's completion form, generated from its JSON Schema (simple types only)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.http import QueryDict
from django.utils import timezone

from shared.api.errors import ValidationFailed


@dataclass
class FormField:
    name: str
    label: str
    kind: str  # text, number, integer, boolean, choice
    required: bool
    choices: list[str] = field(default_factory=list)
    value: Any = None
    errors: list[str] = field(default_factory=list)


def _kind(prop: dict[str, Any]) -> str:
    if "enum" in prop:
        return "choice"
    return {"number": "number", "integer": "integer", "boolean": "boolean"}.get(str(prop.get("type")), "text")


def form_fields(schema: dict[str, Any], values: dict[str, Any] | None = None) -> list[FormField]:
    required = set(schema.get("required") or [])
    values = values or {}
    return [
        FormField(
            name=name,
            label=str(prop.get("title") or name),
            kind=_kind(prop),
            required=name in required,
            choices=[str(c) for c in prop.get("enum", [])],
            value=values.get(name),
        )
        for name, prop in (schema.get("properties") or {}).items()
        if isinstance(prop, dict)
    ]


def _coerce(kind: str, raw: str) -> Any:
    """Typed values where the text parses; otherwise the text itself, so the server's schema
    validation reports it in its own words."""
    try:
        if kind == "integer":
            return int(raw)
        if kind == "number":
            return float(raw)
    except ValueError:
        return raw
    return raw


def form_data(fields: list[FormField], posted: QueryDict) -> dict[str, Any]:
    """The submitted data: an empty input is an absent property (so `required` applies)."""
    data: dict[str, Any] = {}
    for f in fields:
        if f.kind == "boolean":
            data[f.name] = posted.get(f.name) == "on"
        elif posted.get(f.name, "") != "":
            data[f.name] = _coerce(f.kind, str(posted.get(f.name)))
    return data


def attach_errors(fields: list[FormField], errors: list[dict[str, str]]) -> list[str]:
    """Puts each `data.<name>` error on its field; returns the errors that belong to no field."""
    by_name = {f"data.{f.name}": f for f in fields}
    rest = []
    for error in errors:
        target = by_name.get(error.get("field", ""))
        if target is None:
            # "'x' is a required property" is reported on the object itself; put it on the field.
            target = next((f for f in fields if f"'{f.name}' is a required property" == error["error"]), None)
        if target is not None:
            target.errors.append(error["error"])
        else:
            rest.append(f"{error.get('field') or ''} {error['error']}".strip())
    return rest


@dataclass
class InboxFilters:
    """The inbox page's filter form: what it shows back, and what the inbox selector receives."""

    values: dict[str, str]
    params: dict[str, str]
    case_type: str | None


def _day(raw: str, name: str) -> date:
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise ValidationFailed(f"{name} must be a date (YYYY-MM-DD)", field=name) from None


def _day_start(day: date) -> datetime:
    """Midnight of `day` in the page's time zone (the user's): a day is the user's day."""
    return datetime.combine(day, time.min).replace(tzinfo=timezone.get_current_timezone())


def _instant(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def inbox_filters(query: QueryDict) -> InboxFilters:
    """`status` and `sortBy` as the API takes them; `dueFrom` / `dueBy` are whole days in the
    user's time zone, both inclusive, turned into the API's exclusive `dueAfter` / `dueBefore`
    instants; `caseType` is a case type key."""
    values = {k: str(query.get(k, "")).strip() for k in ("status", "caseType", "dueFrom", "dueBy", "sortBy")}
    params = {k: values[k] for k in ("status", "sortBy") if values[k]}
    if values["dueFrom"]:
        params["dueAfter"] = _instant(
            _day_start(_day(values["dueFrom"], "dueFrom")) - timedelta(microseconds=1)
        )
    if values["dueBy"]:
        params["dueBefore"] = _instant(_day_start(_day(values["dueBy"], "dueBy") + timedelta(days=1)))
    return InboxFilters(values=values, params=params, case_type=values["caseType"] or None)
