"""Secrets stored at rest (connector configurations, webhook secrets and headers): Fernet tokens
under MultiFernet over the project's FIELD_ENCRYPTION_KEYS setting.

The first key encrypts; every key decrypts. To rotate, put a new key first and keep the old ones
after it: stored values still decrypt, each write re-encrypts with the new key, and `rotate`
re-encrypts a stored value with the first key; once every value is rotated the old key can go.
A value is a Fernet token (URL-safe base64 text) of the UTF-8 text, or of the JSON with sorted keys.
"""

from __future__ import annotations

import json
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

UNDECRYPTABLE = "stored secret does not decrypt with any key"


class UndecryptableSecret(InvalidToken):
    """A stored value none of the configured keys opens (a key was dropped too early). An
    `InvalidToken`, so code that catches Fernet's own error still does."""


def fernet() -> MultiFernet:
    keys = [k for k in settings.FIELD_ENCRYPTION_KEYS if k]
    if not keys:
        raise ImproperlyConfigured(
            "FIELD_ENCRYPTION_KEYS (CASE_FIELD_ENCRYPTION_KEYS, ORCH_FIELD_ENCRYPTION_KEYS) must name "
            "at least one Fernet key."
        )
    return MultiFernet([Fernet(k) for k in keys])


def encrypt_text(value: str) -> str:
    return fernet().encrypt(value.encode("utf-8")).decode("ascii")


def decrypt_text(token: str, *, what: str = UNDECRYPTABLE) -> str:
    """`what` is the message of the error when no key opens the token (callers name the value)."""
    try:
        return fernet().decrypt(token.encode("ascii")).decode("utf-8")
    except InvalidToken as exc:
        raise UndecryptableSecret(what) from exc


def encrypt_json(value: Any) -> str:
    return encrypt_text(json.dumps(value, sort_keys=True))


def decrypt_json(token: str, *, what: str = UNDECRYPTABLE) -> Any:
    return json.loads(decrypt_text(token, what=what))


def rotate(token: str, *, what: str = UNDECRYPTABLE) -> str:
    """The same value encrypted with the first key."""
    try:
        return fernet().rotate(token.encode("ascii")).decode("ascii")
    except InvalidToken as exc:
        raise UndecryptableSecret(what) from exc
