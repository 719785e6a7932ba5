"""Ed25519 keys that sign audit checkpoints, and the canonical message a checkpoint signs.

Keys come from settings as `<key id>:<base64 of the 32-byte private seed>`, a list: the first key
signs new checkpoints, every key verifies, so a key is rotated by putting a new one first and
keeping the old one after it for as long as checkpoints it signed are to verify. This module reads
no models, so settings import it to refuse a malformed key at start.

The private key never leaves this module: `Keyring` has no printable form holding it, and errors
name the key id only.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from shared.api.time import iso
from shared.audit.hashing import canonical_json

SCHEME = "audit-checkpoint/v1"
ALGORITHM = "Ed25519"
KEY_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


class SigningKeyError(ValueError):
    """A signing key setting that cannot be used (the message names the key id, never the key)."""


@dataclass(frozen=True)
class Keyring:
    signing_key_id: str
    _private: dict[str, Ed25519PrivateKey] = field(repr=False)

    @property
    def key_ids(self) -> list[str]:
        return list(self._private)

    def sign(self, message: bytes) -> str:
        return base64.b64encode(self._private[self.signing_key_id].sign(message)).decode()

    def public_key(self, key_id: str) -> Ed25519PublicKey | None:
        private = self._private.get(key_id)
        return private.public_key() if private else None

    def verify(self, key_id: str, message: bytes, signature: str) -> bool:
        public = self.public_key(key_id)
        if public is None:
            return False
        try:
            public.verify(base64.b64decode(signature, validate=True), message)
        except (InvalidSignature, binascii.Error, ValueError):
            return False
        return True

    def public_keys_out(self) -> list[dict[str, Any]]:
        return [
            {
                "keyId": key_id,
                "algorithm": ALGORITHM,
                "publicKey": base64.b64encode(
                    private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
                ).decode(),
                "signing": key_id == self.signing_key_id,
            }
            for key_id, private in self._private.items()
        ]


def parse_keys(entries: list[str]) -> Keyring:
    """`["<key id>:<base64 seed>", ...]` as a keyring; SigningKeyError when empty or malformed."""
    keys: dict[str, Ed25519PrivateKey] = {}
    for position, entry in enumerate(entry.strip() for entry in entries):
        key_id, _, encoded = entry.partition(":")
        if not KEY_ID.fullmatch(key_id) or not encoded:
            raise SigningKeyError(
                f"audit signing key #{position + 1} must read <key id>:<base64 32-byte seed>"
            )
        if key_id in keys:
            raise SigningKeyError(f"audit signing key id {key_id!r} is listed twice")
        try:
            seed = base64.b64decode(encoded, validate=True)
        except binascii.Error:
            seed = b""
        if len(seed) != 32:
            raise SigningKeyError(f"audit signing key {key_id!r} is not the base64 of 32 bytes")
        keys[key_id] = Ed25519PrivateKey.from_private_bytes(seed)
    if not keys:
        raise SigningKeyError("no audit signing key is configured")
    return Keyring(signing_key_id=next(iter(keys)), _private=keys)


def derived_key_entry(secret: str, *, key_id: str = "derived") -> str:
    """A key entry derived from the service's SECRET_KEY: stable across restarts, for the embedded
    default and tests only (production settings refuse to start without configured keys, since
    checkpoints signed with a key anyone holding the SECRET_KEY can derive prove less)."""
    seed = hashlib.sha256(f"audit-checkpoint-signing-key:{secret}".encode()).digest()
    return f"{key_id}:{base64.b64encode(seed).decode()}"


def new_key_entry(key_id: str) -> str:
    """A fresh random key entry, for an operator generating a production key."""
    seed = Ed25519PrivateKey.generate().private_bytes_raw()
    return f"{key_id}:{base64.b64encode(seed).decode()}"


def checkpoint_claim(
    *, log: str, chain: str, sequence: int, head_hash: str, created_at: datetime, key_id: str
) -> dict[str, Any]:
    """What a checkpoint asserts. `log` names the service, so a checkpoint of one service's chain
    cannot pass for another's; the key id is inside, so a signature cannot be moved to another key."""
    return {
        "scheme": SCHEME,
        "log": log,
        "chain": chain,
        "sequence": sequence,
        "headHash": head_hash,
        "createdAt": iso(created_at),
        "keyId": key_id,
    }


def claim_message(claim: dict[str, Any]) -> bytes:
    """The signed bytes: the claim's canonical JSON (sorted keys, no whitespace, UTF-8), the same
    encoding as the chain's entries, so a witness can rebuild it from the published fields."""
    return canonical_json(claim).encode("utf-8")
