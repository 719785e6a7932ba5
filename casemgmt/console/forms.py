"""Forms generated from JSON Schema (a task's `formSchema`, a case type's `schema`): titles as
labels, descriptions as help, enums as selects, formats as the matching inputs, nested objects as
groups of fields and lists as one entry a line. Names are dotted paths (`address.street`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.http import QueryDict
from django.utils import timezone
from django.utils.translation import gettext as _

from casemgmt.cases.schema_words import label_of, ordered_properties
from shared.api.errors import ValidationFailed

# JSON Schema `format` -> the HTML input type that lets a browser help (a date picker, a keyboard).
INPUT_TYPES = {"date": "date", "email": "email", "uri": "url", "time": "time"}
_SCALARS = {"number", "integer", "boolean", "string"}


@dataclass
class FormField:
    name: str  # dotted path in the data
    label: str
    kind: str  # text, textarea, number, integer, boolean, choice, list, json, group
    required: bool
    choices: list[str] = field(default_factory=list)
    value: Any = None
    errors: list[str] = field(default_factory=list)
    description: str = ""
    input_type: str = "text"
    item_kind: str = ""  # for a list: the kind of each entry
    children: list[FormField] = field(default_factory=list)
    minimum: Any = None
    maximum: Any = None

    @property
    def html_id(self) -> str:
        return "f-" + self.name.replace(".", "-")

    @property
    def text_value(self) -> str:
        """The value as the input shows it."""
        if self.value is None:
            return ""
        if self.kind == "list":
            return "\n".join(str(v) for v in self.value) if isinstance(self.value, list) else str(self.value)
        if self.kind == "json":
            return self.value if isinstance(self.value, str) else json.dumps(self.value, indent=2)
        return str(self.value)

    def flat(self) -> list[FormField]:
        return [self] if self.kind != "group" else [leaf for c in self.children for leaf in c.flat()]


def _type(prop: dict[str, Any]) -> str:
    kind = prop.get("type")
    if isinstance(kind, list):  # ["string", "null"]: the non-null one
        kind = next((k for k in kind if k != "null"), "string")
    return str(kind or ("object" if "properties" in prop else "string"))


def _field(name: str, prop: dict[str, Any], required: bool, value: Any) -> FormField:
    kind_of = _type(prop)
    common = {
        "name": name,
        "label": label_of(name.rsplit(".", 1)[-1], prop),
        "required": required,
        "value": value,
        "description": str(prop.get("description") or ""),
    }
    if "enum" in prop:
        return FormField(kind="choice", choices=[str(c) for c in prop["enum"]], **common)
    if kind_of == "object" and isinstance(prop.get("properties"), dict):
        children = _fields(prop, value if isinstance(value, dict) else {}, prefix=f"{name}.")
        return FormField(kind="group", children=children, **common)
    if kind_of == "array":
        items = prop.get("items")
        item_kind = _type(items if isinstance(items, dict) else {})
        if item_kind in _SCALARS and item_kind != "boolean":
            return FormField(kind="list", item_kind=item_kind, **common)
        return FormField(kind="json", **common)
    if kind_of in ("number", "integer", "boolean"):
        return FormField(kind=kind_of, minimum=prop.get("minimum"), maximum=prop.get("maximum"), **common)
    if kind_of == "object":
        return FormField(kind="json", **common)
    long_text = prop.get("maxLength", 0) > 200 if isinstance(prop.get("maxLength"), int) else False
    fmt = str(prop.get("format") or "")
    return FormField(
        kind="textarea" if long_text else "text", input_type=INPUT_TYPES.get(fmt, "text"), **common
    )


def _fields(schema: dict[str, Any], values: dict[str, Any], prefix: str = "") -> list[FormField]:
    required = set(schema.get("required") or [])
    return [
        _field(f"{prefix}{name}", prop, name in required, values.get(name))
        for name, prop in ordered_properties(schema)
        if isinstance(prop, dict)
    ]


def form_fields(schema: dict[str, Any], values: dict[str, Any] | None = None) -> list[FormField]:
    return _fields(schema, values or {})


def _coerce(kind: str, raw: str) -> Any:
    """Typed values where the text parses; otherwise the text itself, so the schema validation
    reports it in its own words."""
    try:
        if kind == "integer":
            return int(raw)
        if kind == "number":
            return float(raw) if any(c in raw for c in ".eE") else int(raw)
    except ValueError:
        return raw
    return raw


def _value(f: FormField, posted: QueryDict) -> tuple[bool, Any]:
    """(whether the field was filled in, its value)."""
    raw = str(posted.get(f.name, ""))
    if f.kind == "boolean":
        return True, posted.get(f.name) == "on"
    if raw.strip() == "":
        return False, None
    if f.kind == "list":
        return True, [_coerce(f.item_kind, line.strip()) for line in raw.splitlines() if line.strip()]
    if f.kind == "json":
        try:
            return True, json.loads(raw)
        except ValueError:
            return True, raw  # the schema's type check names it
    return True, _coerce(f.kind, raw)


def _put(data: dict[str, Any], fields: list[FormField], posted: QueryDict) -> None:
    for f in fields:
        key = f.name.rsplit(".", 1)[-1]
        if f.kind == "group":
            inner: dict[str, Any] = {}
            _put(inner, f.children, posted)
            if inner or f.required:  # an untouched optional group is absent
                data[key] = inner
            continue
        filled, value = _value(f, posted)
        if filled:
            data[key] = value


def form_data(fields: list[FormField], posted: QueryDict) -> dict[str, Any]:
    """The submitted data: an empty input is an absent property (so `required` applies)."""
    data: dict[str, Any] = {}
    _put(data, fields, posted)
    return data


def _field_name(path: str) -> str:
    """`data.address.street` / `data.tags[1]` -> the form field's name (`address.street`, `tags`)."""
    name = path.removeprefix("data").lstrip(".")
    return name.split("[", 1)[0]


def attach_errors(fields: list[FormField], errors: list[dict[str, str]]) -> list[dict[str, str]]:
    """Puts each `data.<path>` error on its field (the nearest enclosing one) and returns the
    summary shown above the form: every error, with the id of the field it belongs to (or "")."""
    leaves = {f.name: f for top in fields for f in top.flat()}
    groups = {f.name: f for top in fields for f in _groups(top)}
    summary = []
    for error in errors:
        name = _field_name(error.get("field", ""))
        target = leaves.get(name) or groups.get(name)
        while target is None and "." in name:
            name = name.rsplit(".", 1)[0]
            target = leaves.get(name) or groups.get(name)
        if target is not None:
            target.errors.append(error["error"])
        summary.append({"message": error["error"], "target": target.html_id if target else ""})
    return summary


def _groups(f: FormField) -> list[FormField]:
    return [f, *(g for c in f.children for g in _groups(c))] if f.kind == "group" else []


@dataclass
class InboxFilters:
    """The inbox page's filter form: what it shows back, and what the inbox selector receives."""

    values: dict[str, str]
    params: dict[str, str]
    case_type: str | None


def _day(raw: str, name: str, label: str) -> date:
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise ValidationFailed(
            _("%(field)s must be a date (YYYY-MM-DD)") % {"field": label}, field=name
        ) from None


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
        day = _day(values["dueFrom"], "dueFrom", _("Due from"))
        params["dueAfter"] = _instant(_day_start(day) - timedelta(microseconds=1))
    if values["dueBy"]:
        day = _day(values["dueBy"], "dueBy", _("Due by"))
        params["dueBefore"] = _instant(_day_start(day + timedelta(days=1)))
    return InboxFilters(values=values, params=params, case_type=values["caseType"] or None)
