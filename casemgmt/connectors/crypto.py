"""Connector configurations at rest: MultiFernet over FIELD_ENCRYPTION_KEYS.

The first key encrypts; every key decrypts. To rotate, put a new key first and keep the old ones
after it: stored values still decrypt, each write re-encrypts with the new key, and
`manage_case.py rotate_connector_keys` re-encrypts the rest; then the old key can be dropped.
"""

from __future__ import annotations

import json
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class UndecryptableConfig(Exception):
    """A stored value none of the configured keys opens (a key was dropped too early)."""


def fernet() -> MultiFernet:
    keys = [k for k in settings.FIELD_ENCRYPTION_KEYS if k]
    if not keys:
        raise ImproperlyConfigured("CASE_FIELD_ENCRYPTION_KEYS must name at least one Fernet key.")
    return MultiFernet([Fernet(k) for k in keys])


def encrypt_json(value: Any) -> str:
    return fernet().encrypt(json.dumps(value, sort_keys=True).encode()).decode("ascii")


def decrypt_json(token: str) -> Any:
    try:
        return json.loads(fernet().decrypt(token.encode("ascii")))
    except InvalidToken as exc:
        raise UndecryptableConfig("stored connector configuration does not decrypt with any key") from exc


def rotate(token: str) -> str:
    """The same value encrypted with the first key."""
    try:
        return fernet().rotate(token.encode("ascii")).decode("ascii")
    except InvalidToken as exc:
        raise UndecryptableConfig("stored connector configuration does not decrypt with any key") from exc
