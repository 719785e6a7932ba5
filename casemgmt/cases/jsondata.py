"""JSON helpers for case data: schema checks with every error listed, RFC 7386 merge, diffs and the
text that full-text search indexes."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from jsonschema import Draft7Validator, FormatChecker
from jsonschema.exceptions import ValidationError as SchemaValidationError
from jsonschema_specifications import REGISTRY as SPECIFICATIONS
from referencing import Registry
from referencing.exceptions import NoSuchResource, Unresolvable
from referencing.jsonschema import DRAFT7

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


def _refuse_retrieval(uri: str) -> Any:
    # Schemas are written by tenant admins: fetching their `$ref` URLs would let anyone with
    # admin:case_types make the server call arbitrary hosts (SSRF) on every case write.
    # referencing's type stubs use a dataclass-transform spelling mypy does not read, so its attrs
    # classes look argument-less to mypy; the keyword arguments are the documented constructors.
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


# Only the schema itself and the bundled draft meta-schemas resolve; nothing is ever fetched.
NO_NETWORK = Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]  # stub gap, as above
_LOCAL = SPECIFICATIONS.combine(NO_NETWORK)

# Exceptions a schema that passed the meta-schema can still raise while validating: an unresolvable
# `$ref`, a `pattern` Python cannot compile, a `$ref` cycle. They are the schema's fault, never a 500.
UNUSABLE_SCHEMA_ERRORS = (Unresolvable, re.error, RecursionError)

# Keywords whose value is a schema, a list of schemas, or a name -> schema map (draft-07). Data-valued
# keywords (enum, const, default, examples) are deliberately not walked: a "$ref" there is just data.
_SUBSCHEMA = (
    "additionalItems",
    "additionalProperties",
    "contains",
    "else",
    "if",
    "not",
    "propertyNames",
    "then",
)
_SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "items")
_SUBSCHEMA_MAPS = ("definitions", "dependencies", "patternProperties", "properties")


def draft7_validator(schema: Any, *, formats: bool = True) -> Draft7Validator:
    """The one way to build a validator for a stored schema (case types, task forms): no remote
    `$ref` retrieval."""
    return Draft7Validator(schema, registry=NO_NETWORK, format_checker=FormatChecker() if formats else None)


def _subschemas(schema: dict[str, Any], path: list[Any]) -> Iterator[tuple[Any, list[Any]]]:
    for key in _SUBSCHEMA:
        if key in schema:
            yield schema[key], [*path, key]
    for key in _SUBSCHEMA_LISTS:
        value = schema.get(key)
        if isinstance(value, list):
            for index, item in enumerate(value):
                yield item, [*path, key, index]
        elif key == "items" and value is not None:
            yield value, [*path, key]
    for key in _SUBSCHEMA_MAPS:
        value = schema.get(key)
        if isinstance(value, dict):
            for name, item in value.items():
                yield item, [*path, key, name]


def _usage_errors(schema: Any, resolver: Any, path: list[Any], root: str) -> Iterator[dict[str, str]]:
    if not isinstance(schema, dict):
        return
    if isinstance(schema.get("$id"), str):  # a nested $id changes the base its refs resolve against
        resolver = resolver.in_subresource(DRAFT7.create_resource(schema))
    ref = schema.get("$ref")
    if isinstance(ref, str):
        try:
            target = resolver.lookup(ref).contents
        except (Unresolvable, ValueError):  # ValueError: a malformed URI such as "http://["
            target = _MISSING
        if target is _MISSING:
            yield {
                "field": json_path(root, [*path, "$ref"]),
                "error": f"$ref '{ref}' does not resolve within the schema (remote references are not fetched)",
            }
        elif not isinstance(target, (dict, bool)):
            yield {
                "field": json_path(root, [*path, "$ref"]),
                "error": f"$ref '{ref}' does not point to a schema",
            }
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        yield from _regex_error(pattern, json_path(root, [*path, "pattern"]))
    pattern_properties = schema.get("patternProperties")
    if isinstance(pattern_properties, dict):
        for key in pattern_properties:
            yield from _regex_error(key, json_path(root, [*path, "patternProperties", key]))
    for sub, sub_path in _subschemas(schema, path):
        yield from _usage_errors(sub, resolver, sub_path, root)


def _regex_error(pattern: str, field: str) -> Iterator[dict[str, str]]:
    try:
        re.compile(pattern)
    except re.error as exc:
        yield {"field": field, "error": f"not a valid regular expression: {exc}"}


def check_schema(schema: Any, *, root: str = "schema") -> None:
    """The schema must itself be valid draft-07 (checked with the meta-schema); else 400.
    Beyond the meta-schema it must be usable: every pattern compiles and every `$ref` resolves
    locally, so that a registered schema can never make later case writes fail."""
    if not isinstance(schema, dict):
        raise ValidationFailed("schema must be a JSON object", field=root)
    meta = Draft7Validator(Draft7Validator.META_SCHEMA)
    errors = [_error_entry(root, e) for e in sorted(meta.iter_errors(schema), key=lambda e: list(e.path))]
    if errors:
        raise ValidationFailed.from_errors(errors)
    resolver = _LOCAL.resolver_with_root(DRAFT7.create_resource(schema))
    errors = list(_usage_errors(schema, resolver, [], root))
    if errors:
        raise ValidationFailed.from_errors(errors)
    try:  # what the walk cannot see, e.g. a `$ref` cycle, shows up on a first real validation
        for _ in draft7_validator(schema).iter_errors({}):
            pass
    except UNUSABLE_SCHEMA_ERRORS as exc:
        raise ValidationFailed(
            f"schema cannot be used for validation: {unusable_reason(exc)}", field=root
        ) from exc


def unusable_reason(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "its $ref chain loops forever"
    return str(exc) or type(exc).__name__


def schema_errors(
    schema: Any,
    data: Any,
    *,
    root: str = "data",
    formats: bool = True,
    validator: Draft7Validator | None = None,
) -> list[dict[str, str]]:
    """Every violation of `data` against `schema` as {field, error}, sorted by path. A schema that cannot
    be applied (bad $ref, bad pattern, $ref loop) is a 400 naming the schema, never a 500.
    `validator`: one already built for `schema` (building one costs more than most validations)."""
    try:
        errors = sorted(
            (validator or draft7_validator(schema, formats=formats)).iter_errors(data),
            key=lambda e: [str(p) for p in e.absolute_path],
        )
    except UNUSABLE_SCHEMA_ERRORS as exc:
        raise ValidationFailed(
            f"the schema cannot be applied: {unusable_reason(exc)}", field="schema"
        ) from exc
    return [_error_entry(root, e) for e in errors]


def validate_data(
    schema: dict[str, Any], data: Any, *, root: str = "data", validator: Draft7Validator | None = None
) -> None:
    """Every schema violation is listed in details.errors with its JSON path (e.g. data.amount)."""
    errors = schema_errors(schema, data, root=root, validator=validator)
    if errors:
        raise ValidationFailed.from_errors(errors)


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


def data_text(data: Any) -> str:
    """The text values of `data` as `search_text` joins them (its tail after the number and name)."""
    return "\n".join(p for p in text_values(data) if p)


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
