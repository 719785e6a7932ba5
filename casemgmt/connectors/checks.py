"""Checks of tenant configuration values shared by several connectors (their `check_config`)."""

from __future__ import annotations

from email.utils import parseaddr
from typing import Any
from urllib.parse import urlsplit


def url_problems(config: dict[str, Any], *keys: str) -> list[dict[str, str]]:
    """Each given key that is set must be an absolute http(s) URL with a host (whether the host may
    be reached is decided at call time, after DNS resolution)."""
    problems = []
    for key in keys:
        value = config.get(key)
        if value in (None, ""):
            continue
        try:
            parts = urlsplit(str(value))
            valid = parts.scheme in ("http", "https") and bool(parts.hostname)
        except ValueError:
            valid = False
        if not valid:
            problems.append({"field": f"config.{key}", "error": "must be an absolute http or https URL"})
    return problems


def is_email_address(value: str) -> bool:
    _name, address = parseaddr(value)
    return "@" in address and "\n" not in value and "\r" not in value
