"""Shape checks for definition bodies, reported as 400 validation errors (every problem listed)."""

from __future__ import annotations

import re
from typing import Any

from shared.api.errors import ValidationFailed

ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
PARAM_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_id(value: str, field: str = "id") -> str:
    if not ID_RE.match(value or ""):
        raise ValidationFailed(
            f"{field} must be 1-100 characters of letters, digits, '_', '.', '-' (starting with a letter or digit)",
            field=field,
        )
    return value


class Problems:
    """Collects {field, error} pairs so one response lists every problem."""

    def __init__(self) -> None:
        self.errors: list[dict[str, str]] = []

    def add(self, field: str, error: str) -> None:
        self.errors.append({"field": field, "error": error})

    def raise_if_any(self) -> None:
        if self.errors:
            raise ValidationFailed.from_errors(self.errors)

    def string(self, body: dict, field: str, *, required: bool = False, default: str = "") -> str:
        value = body.get(field)
        if value is None:
            if required:
                self.add(field, "This field is required.")
            return default
        if not isinstance(value, str):
            self.add(field, "must be a string")
            return default
        if required and not value.strip():
            self.add(field, "must not be blank")
        return value

    def string_list(self, body: dict, field: str) -> list[str]:
        value = body.get(field, [])
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.add(field, "must be an array of strings")
            return []
        return value

    def string_map(self, value: Any, field: str, *, env_names: bool = True) -> dict[str, str]:
        """Objects of string to string; numbers are accepted and kept as their text."""
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.add(field, "must be an object of string values")
            return {}
        out: dict[str, str] = {}
        for key, item in value.items():
            if env_names and not PARAM_RE.match(key):
                self.add(f"{field}.{key}", "names must match [A-Za-z_][A-Za-z0-9_]*")
            elif isinstance(item, bool) or not isinstance(item, (str, int, float)):
                self.add(f"{field}.{key}", "must be a string")
            else:
                out[key] = str(item)
        return out


def require_object(body: Any) -> dict:
    if not isinstance(body, dict):
        raise ValidationFailed("The request body must be a JSON object.")
    return body
