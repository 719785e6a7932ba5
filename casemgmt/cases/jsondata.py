"""JSON helpers for case data: schema checks with every error listed, RFC 7386 merge, diffs and the
text that full-text search indexes."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from jsonschema import Draft7Validator, FormatChecker
from jsonschema.exceptions import ValidationError as SchemaValidationError

from shared.api.errors import ValidationFailed

_REQUIRED = re.compile(r"^'(?P<name>.+)' is a required property$")
_MISSING = object()
SEARCH_TEXT_LIMIT = 200_000  # PostgreSQL caps a tsvector at 1 MB; bound the indexed text well below


def json_path(root: str, parts: Iterable[Any]) -> str:
    path = root
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _error_entry(root: str, error: SchemaValidationError) -> dict[str, str]:
    parts = list(error.absolute_path)
    match = _REQUIRED.match(error.message) if error.validator == "required" else None
    if match:  # name the missing field itself, not its parent object
        parts.append(match.group("name"))
    return {"field": json_path(root, parts), "error": error.message}


def check_schema(schema: Any, *, root: str = "schema") -> None:
    """spec: the schema must itself be valid draft-07 (checked with the meta-schema); else 400."""
    if not isinstance(schema, dict):
        raise ValidationFailed("schema must be a JSON object", field=root)
    meta = Draft7Validator(Draft7Validator.META_SCHEMA)
    errors = [_error_entry(root, e) for e in sorted(meta.iter_errors(schema), key=lambda e: list(e.path))]
    if errors:
        raise ValidationFailed.from_errors(errors)


def validate_data(schema: dict[str, Any], data: Any, *, root: str = "data") -> None:
    """Every schema violation is listed in details.errors with its JSON path (e.g. data.amount)."""
    validator = Draft7Validator(schema, format_checker=FormatChecker())
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        raise ValidationFailed.from_errors([_error_entry(root, e) for e in errors])


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, `null` removes a key, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def diff(before: Any, after: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """(path, old, new) for every leaf that differs; objects are walked, arrays compared whole.
    A missing side is reported as None."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after), key=str):
            old, new = before.get(key, _MISSING), after.get(key, _MISSING)
            if old != new or type(old) is not type(new):
                yield from diff(old, new, json_path(path, [key]))
        return
    yield path, (None if before is _MISSING else before), (None if after is _MISSING else after)


def data_changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The audit `changes` of a data update: {"before": {path: old}, "after": {path: new}}."""
    old_values: dict[str, Any] = {}
    new_values: dict[str, Any] = {}
    for path, old, new in diff(before, after):
        old_values[path] = old
        new_values[path] = new
    return {"before": old_values, "after": new_values}


def text_values(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from text_values(item)
    elif isinstance(value, list):
        for item in value:
            yield from text_values(item)


def search_text(*, case_number: str, display_name: str, data: Any) -> str:
    # The number is indexed whole and split ("IC-000042" and "IC 000042") so that either form matches.
    parts = [case_number, case_number.replace("-", " "), display_name, *text_values(data)]
    return "\n".join(p for p in parts if p)[:SEARCH_TEXT_LIMIT]


def summary_of(data: Any, *, max_fields: int = 5, max_chars: int = 120) -> dict[str, Any]:
    """List items carry `summary`: the first few top-level scalar fields of the data."""
    summary: dict[str, Any] = {}
    if not isinstance(data, dict):
        return summary
    for key, value in data.items():
        if isinstance(value, (str, int, float, bool)):
            summary[key] = value[:max_chars] if isinstance(value, str) else value
            if len(summary) == max_fields:
                break
    return summary
