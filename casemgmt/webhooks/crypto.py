"""Secrets at rest: Fernet with FIELD_ENCRYPTION_KEYS (the first key encrypts, every key decrypts,
so a new key is rotated in by putting it first)."""

from __future__ import annotations

from cryptography.fernet import Fernet, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


def _fernet() -> MultiFernet:
    keys = list(settings.FIELD_ENCRYPTION_KEYS)
    if not keys:
        raise ImproperlyConfigured("CASE_FIELD_ENCRYPTION_KEYS must name at least one Fernet key.")
    return MultiFernet([Fernet(k) for k in keys])


def encrypt_text(value: str) -> str:
    return _fernet().encrypt(value.encode("utf-8")).decode("ascii")


def decrypt_text(token: str) -> str:
    return _fernet().decrypt(token.encode("ascii")).decode("utf-8")
