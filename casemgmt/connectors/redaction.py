"""Keeping credentials out of responses, logs and invocation logs."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

MASK = "***"
# Header names whose values are credentials whatever the connector (matched case-insensitively).
_SECRET_HEADER = re.compile(r"authorization|cookie|token|secret|signature|api[-_]?key|password", re.I)
# Secret values shorter than this are not scrubbed from free text (too likely to be ordinary words).
_MIN_SCRUB = 4


def redact_headers(headers: Mapping[str, str], secrets: Iterable[str] = ()) -> dict[str, str]:
    return {
        name: MASK if _SECRET_HEADER.search(name) else scrub(str(value), secrets)
        for name, value in headers.items()
    }


def scrub(text: str, secrets: Iterable[str]) -> str:
    """Replaces every known secret value occurring in `text` by ***; longest first, so a secret
    that contains another is replaced whole. Also drops NUL characters, which PostgreSQL text and
    jsonb refuse (an outside system's reply may contain them)."""
    text = text.replace("\x00", "")
    for secret in sorted(
        {s for s in secrets if isinstance(s, str) and len(s) >= _MIN_SCRUB}, key=len, reverse=True
    ):
        text = text.replace(secret, MASK)
    return text


def scrub_value(value: Any, secrets: Iterable[str]) -> Any:
    """scrub() through a JSON value (strings inside dicts and lists)."""
    secrets = tuple(secrets)
    if isinstance(value, str):
        return scrub(value, secrets)
    if isinstance(value, dict):
        return {k: scrub_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_value(v, secrets) for v in value]
    return value


def redact_config(config: Mapping[str, Any], secret_keys: Iterable[str]) -> dict[str, Any]:
    """A connector configuration as shown to people: secret keys (at any depth) as ***."""
    keys = frozenset(secret_keys)

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: (MASK if k in keys else walk(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return walk(dict(config))


def secret_values(config: Mapping[str, Any], secret_keys: Iterable[str]) -> list[str]:
    """Every string stored under a secret key (at any depth): what scrub() must remove."""
    keys, found = frozenset(secret_keys), []

    def walk(value: Any, secret: bool) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, secret or k in keys)
        elif isinstance(value, list):
            for v in value:
                walk(v, secret)
        elif secret and isinstance(value, str):
            found.append(value)

    walk(dict(config), False)
    return found
