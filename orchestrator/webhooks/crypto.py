"""Field encryption with Fernet keys from FIELD_ENCRYPTION_KEYS (first key encrypts, all decrypt,
so keys can be rotated by prepending a new one)."""

from __future__ import annotations

import json
from typing import Any

from cryptography.fernet import Fernet, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


def _fernet() -> MultiFernet:
    keys = list(settings.FIELD_ENCRYPTION_KEYS)
    if not keys:
        raise ImproperlyConfigured("FIELD_ENCRYPTION_KEYS must name at least one Fernet key.")
    return MultiFernet([Fernet(k) for k in keys])


def encrypt_text(value: str) -> str:
    return _fernet().encrypt(value.encode("utf-8")).decode("ascii")


def decrypt_text(token: str) -> str:
    return _fernet().decrypt(token.encode("ascii")).decode("utf-8")


def encrypt_json(value: Any) -> str:
    return encrypt_text(json.dumps(value, sort_keys=True))


def decrypt_json(token: str) -> Any:
    return json.loads(decrypt_text(token))
