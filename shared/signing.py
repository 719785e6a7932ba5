"""HMAC-SHA256 signatures of webhook bodies, in the two forms this system speaks.

- `sha256=<hex>`: HMAC-SHA256 of a message (the raw body, or `<timestamp>.<body>`, or
  `<id>.<timestamp>.<body>`) keyed with the UTF-8 bytes of a shared secret. Used by the outbound
  `webhook` connector, the orchestrator's webhooks and callbacks, and inbound webhooks.
- Standard Webhooks (standardwebhooks.com): headers `webhook-id`, `webhook-timestamp` (Unix
  seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, several
  signatures separated by spaces while a sender rotates its secret. A secret written `whsec_<base64>`
  keys the HMAC with the decoded bytes, as Standard Webhooks libraries do; any other secret with its
  UTF-8 bytes.

Every comparison is constant-time, so a forger learns nothing from how long a refusal takes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time

PREFIX = "sha256="
STANDARD_VERSION = "v1"
STANDARD_SECRET_PREFIX = "whsec_"  # noqa: S105 - a key prefix, not a secret


def _key(secret: str | bytes) -> bytes:
    return secret if isinstance(secret, bytes) else secret.encode("utf-8")


def sha256_hex(secret: str | bytes, message: bytes) -> str:
    """The bare hex HMAC-SHA256 of `message`."""
    return hmac.new(_key(secret), message, hashlib.sha256).hexdigest()


def sha256_sign(secret: str | bytes, message: bytes) -> str:
    """`sha256=<hex HMAC-SHA256 of message>`."""
    return PREFIX + sha256_hex(secret, message)


def sha256_verify(secret: str | bytes, message: bytes, header: str | None) -> bool:
    """True when `header` is exactly `sha256=<lower-case hex>` of `message`. Exact, because some
    callers remember accepted signatures to refuse replays: a variant spelling of one signature
    (upper-case hex) must not pass as a new one. Lenient receivers normalise before calling."""
    expected = sha256_sign(secret, message).encode()
    return hmac.compare_digest(expected, (header or "").encode("utf-8", "replace"))


def sha256_normalise(header: str | None) -> str | None:
    """`sha256=<hex>` with the hex lower-cased and trimmed (None when not of that form)."""
    if not header or not header.startswith(PREFIX):
        return None
    return PREFIX + header.removeprefix(PREFIX).strip().lower()


def timestamped(timestamp: str, body: bytes, *, msg_id: str | None = None) -> bytes:
    """The signed message of the timestamped forms: `<timestamp>.<body>`, or `<id>.<timestamp>.<body>`."""
    head = f"{msg_id}.{timestamp}." if msg_id is not None else f"{timestamp}."
    return head.encode("utf-8") + body


def timestamp_fresh(timestamp: str | None, window_seconds: float, *, now: float | None = None) -> bool:
    """True when `timestamp` is Unix seconds at most `window_seconds` from now, either way (a clock
    ahead of ours is as suspect as an old message)."""
    if not timestamp or not timestamp.isascii() or not timestamp.isdigit() or len(timestamp) > 12:
        return False
    current = time.time() if now is None else now
    return abs(current - int(timestamp)) <= window_seconds


def standard_key(secret: str) -> bytes:
    if secret.startswith(STANDARD_SECRET_PREFIX):
        try:
            return base64.b64decode(secret.removeprefix(STANDARD_SECRET_PREFIX), validate=True)
        except (binascii.Error, ValueError):
            pass  # not base64 after all: the secret as written
    return secret.encode("utf-8")


def standard_sign(secret: str, msg_id: str, timestamp: str, body: bytes) -> str:
    """`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, the `webhook-signature` value."""
    digest = hmac.new(standard_key(secret), timestamped(timestamp, body, msg_id=msg_id), hashlib.sha256)
    return f"{STANDARD_VERSION},{base64.b64encode(digest.digest()).decode()}"


def standard_verify(secret: str, msg_id: str, timestamp: str, body: bytes, header: str | None) -> bool:
    """True when one of the space-separated `v1,<base64>` signatures in `header` matches; other
    versions are skipped (a sender may offer schemes this receiver does not know)."""
    if not header:
        return False
    expected = standard_sign(secret, msg_id, timestamp, body).encode()
    matched = False
    for candidate in header.split(" "):
        if candidate.startswith(STANDARD_VERSION + ","):
            # No early exit: every candidate is compared, matched or not.
            matched |= hmac.compare_digest(expected, candidate.encode("utf-8", "replace"))
    return matched
