"""Id and parameter-name rules shared by definitions and runs."""

from __future__ import annotations

import re

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
