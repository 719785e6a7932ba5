"""JSON Schema violations in the words a person uses, naming each field by its schema `title`
("Amount claimed is required", "Due from must be a date (YYYY-MM-DD)"). The console shows these
beside the fields; the checks themselves are the API's (the same draft-07 validator)."""

from __future__ import annotations

import re
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from jsonschema.exceptions import ValidationError as SchemaValidationError

from casemgmt.cases.jsondata import UNUSABLE_SCHEMA_ERRORS, draft7_validator, json_path

_REQUIRED = re.compile(r"^'(?P<name>.+)' is a required property$")
_EXTRA = re.compile(r"\('(?P<name>[^']+)'")


def label_of(name: str, schema: Any) -> str:
    """A property's title, else its name made readable (`due_from` -> "Due from")."""
    if isinstance(schema, dict) and isinstance(schema.get("title"), str) and schema["title"].strip():
        return str(schema["title"])
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", str(name)).replace("_", " ").replace("-", " ").strip()
    return (words[:1].upper() + words[1:].lower()) if words else str(name)


def ordered_properties(schema: Any) -> list[tuple[str, Any]]:
    """A schema's properties in the order people meet them: the `required` ones in the order that
    list gives, then the others by label. (Stored schemas keep no key order: PostgreSQL's jsonb
    sorts object keys by length, so the order they were written in is gone; `required` is a list
    and keeps it.)"""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return []
    required = [n for n in dict.fromkeys(schema.get("required") or []) if n in properties]
    rest = sorted(
        (n for n in properties if n not in required), key=lambda n: label_of(n, properties[n]).lower()
    )
    return [(n, properties[n]) for n in [*required, *rest]]


def _type_words(expected: Any) -> str:
    names = expected if isinstance(expected, list) else [expected]
    words = {
        "integer": _("a whole number"),
        "number": _("a number"),
        "string": _("text"),
        "boolean": _("yes or no"),
        "object": _("a group of fields"),
        "array": _("a list"),
        "null": _("empty"),
    }
    return _(" or ").join(words.get(str(n), str(n)) for n in names)


def _format_words(fmt: str) -> str:
    return {
        "date": _("a date (YYYY-MM-DD)"),
        "date-time": _("a date and time (YYYY-MM-DDThh:mm:ssZ)"),
        "time": _("a time (hh:mm:ss)"),
        "email": _("an email address"),
        "uri": _("a web address (https://…)"),
        "uuid": _("an identifier (UUID)"),
    }.get(fmt, _("in the format %(format)s") % {"format": fmt})


def _sentence(error: SchemaValidationError, label: str) -> str:  # noqa: C901 - one branch per keyword
    v, value = error.validator, error.validator_value
    if v == "type":
        return _("%(field)s must be %(kind)s") % {"field": label, "kind": _type_words(value)}
    if v == "format":
        return _("%(field)s must be %(kind)s") % {"field": label, "kind": _format_words(str(value))}
    if v == "minimum":
        return _("%(field)s must be at least %(n)s") % {"field": label, "n": value}
    if v == "maximum":
        return _("%(field)s must be at most %(n)s") % {"field": label, "n": value}
    if v == "exclusiveMinimum":
        return _("%(field)s must be more than %(n)s") % {"field": label, "n": value}
    if v == "exclusiveMaximum":
        return _("%(field)s must be less than %(n)s") % {"field": label, "n": value}
    if v == "multipleOf":
        return _("%(field)s must be a multiple of %(n)s") % {"field": label, "n": value}
    if v == "minLength":
        if value == 1:
            return _("%(field)s must not be empty") % {"field": label}
        return ngettext(
            "%(field)s must be at least %(n)s character long",
            "%(field)s must be at least %(n)s characters long",
            value,
        ) % {"field": label, "n": value}
    if v == "maxLength":
        return ngettext(
            "%(field)s must be at most %(n)s character long",
            "%(field)s must be at most %(n)s characters long",
            value,
        ) % {"field": label, "n": value}
    if v == "pattern":
        return _("%(field)s is not in the expected format") % {"field": label}
    if v in ("enum", "const"):
        options = value if isinstance(value, list) else [value]
        return _("%(field)s must be one of: %(options)s") % {
            "field": label,
            "options": ", ".join(str(o) for o in options),
        }
    if v == "minItems":
        return ngettext(
            "%(field)s needs at least %(n)s entry", "%(field)s needs at least %(n)s entries", value
        ) % {"field": label, "n": value}
    if v == "maxItems":
        return ngettext(
            "%(field)s takes at most %(n)s entry", "%(field)s takes at most %(n)s entries", value
        ) % {"field": label, "n": value}
    if v == "uniqueItems":
        return _("%(field)s must not list the same entry twice") % {"field": label}
    if v == "additionalProperties":
        match = _EXTRA.search(error.message)
        extra = match.group("name") if match else ""
        if not list(error.absolute_path):
            return _("“%(name)s” is not a known field") % {"name": extra}
        return _("“%(name)s” is not a field of %(field)s") % {"name": extra, "field": label}
    return f"{label}: {error.message}"


def _property_schema(root: dict[str, Any], parts: list[Any]) -> Any:
    """The schema of the value at `parts` (through `properties` and `items`), for its title."""
    schema: Any = root
    for part in parts:
        if not isinstance(schema, dict):
            return None
        if isinstance(part, int):
            items = schema.get("items")
            schema = items if isinstance(items, dict) else None
        else:
            schema = (schema.get("properties") or {}).get(part)
    return schema


def human_entry(
    schema: dict[str, Any], error: SchemaValidationError, *, root: str = "data"
) -> dict[str, str]:
    """One violation as {field: its JSON path, error: a sentence naming the field by its title}."""
    parts = list(error.absolute_path)
    required = _REQUIRED.match(error.message) if error.validator == "required" else None
    if required:  # the missing property is named on itself, not on its parent object
        name = required.group("name")
        parent = error.schema if isinstance(error.schema, dict) else {}
        label = label_of(name, (parent.get("properties") or {}).get(name))
        return {
            "field": json_path(root, [*parts, name]),
            "error": _("%(field)s is required") % {"field": label},
        }
    named = [p for p in parts if not isinstance(p, int)]
    label = label_of(named[-1], _property_schema(schema, parts)) if named else _("The data")
    if parts and isinstance(parts[-1], int):
        label = _("%(field)s, entry %(n)s") % {"field": label, "n": parts[-1] + 1}
    return {"field": json_path(root, parts), "error": _sentence(error, label)}


def human_errors(
    schema: dict[str, Any], data: Any, *, root: str = "data", formats: bool = True
) -> list[dict[str, str]]:
    """Every violation of `data` against `schema`, as `schema_errors` lists them, in words."""
    try:
        found = sorted(
            draft7_validator(schema, formats=formats).iter_errors(data),
            key=lambda e: [str(p) for p in e.absolute_path],
        )
    except UNUSABLE_SCHEMA_ERRORS:
        return []  # the service reports an unusable schema itself
    return [human_entry(schema, e, root=root) for e in found]
