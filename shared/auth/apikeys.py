"""API keys: random, shown once, stored only as a SHA-256 hash.

Keys carry 256 bits of randomness, so a fast hash is safe here (no dictionary to attack) and keeps
per-request lookups cheap: we look the row up by hash rather than comparing in Python.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass


@dataclass(frozen=True)
class NewKey:
    plaintext: str
    prefix: str
    hashed: str


def generate(label: str) -> NewKey:
    body = secrets.token_urlsafe(32)
    plaintext = f"{label}_{body}"
    return NewKey(plaintext=plaintext, prefix=plaintext[: len(label) + 9], hashed=hash_key(plaintext))


def hash_key(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode("utf-8")).hexdigest()


def matches(plaintext: str, hashed: str) -> bool:
    return hmac.compare_digest(hash_key(plaintext), hashed)


def looks_like_key(value: str, label: str) -> bool:
    return value.startswith(f"{label}_") and len(value) > len(label) + 20
