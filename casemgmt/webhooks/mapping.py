"""From a delivery's JSON payload to case data, with RFC 6901 JSON pointers.

A mapping is `{target pointer: source pointer}`: each source pointer is read from the payload and
its value (any JSON type, kept as is) is written at the target pointer in the case data, creating
intermediate objects. A source the payload lacks leaves its target out. An empty mapping takes the
whole payload, which must then be a JSON object.
"""

from __future__ import annotations

from typing import Any

from shared.api.errors import ValidationFailed

MAX_MAPPINGS = 200
_MISSING = object()


def parse_pointer(pointer: str, *, field: str, allow_root: bool) -> list[str]:
    if pointer == "" and allow_root:
        return []
    if not isinstance(pointer, str) or not pointer.startswith("/") or len(pointer) > 200:
        raise ValidationFailed(
            f"{pointer!r} is not a JSON pointer: it must start with '/' and be at most 200 characters",
            field=field,
        )
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer[1:].split("/")]


def check_mapping(mapping: Any) -> dict[str, str]:
    """The mapping as stored; 400 naming the first bad entry."""
    if not isinstance(mapping, dict):
        raise ValidationFailed(
            "mapping must be an object of target pointer to source pointer", field="mapping"
        )
    if len(mapping) > MAX_MAPPINGS:
        raise ValidationFailed(f"mapping has at most {MAX_MAPPINGS} entries", field="mapping")
    for target, source in mapping.items():
        parse_pointer(target, field=f"mapping.{target}", allow_root=False)
        if not isinstance(source, str):
            raise ValidationFailed("each source must be a JSON pointer string", field=f"mapping.{target}")
        parse_pointer(source, field=f"mapping.{target}", allow_root=True)
    return dict(mapping)


def resolve(document: Any, pointer: str) -> Any:
    """The value at `pointer`, or _MISSING."""
    value = document
    for part in parse_pointer(pointer, field="pointer", allow_root=True):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


def _place(target: dict[str, Any], parts: list[str], value: Any) -> None:
    for part in parts[:-1]:
        child = target.get(part)
        if not isinstance(child, dict):
            child = target[part] = {}
        target = child
    target[parts[-1]] = value


def map_payload(mapping: dict[str, str], payload: Any) -> dict[str, Any]:
    if not mapping:
        if not isinstance(payload, dict):
            raise ValidationFailed("the payload must be a JSON object", field="body")
        return payload
    data: dict[str, Any] = {}
    for target, source in mapping.items():
        value = resolve(payload, source)
        if value is not _MISSING:
            _place(data, parse_pointer(target, field="mapping", allow_root=False), value)
    return data


def case_reference(pointer: str, payload: Any) -> str | None:
    """The case id or number the payload names at `pointer`, if any (strings and integers only)."""
    if not pointer:
        return None
    value = resolve(payload, pointer)
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    text = str(value).strip()
    return text or None
