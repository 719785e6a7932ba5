"""The audit chain hash: sha256 over previousHash + canonical JSON of {id, timestamp, actor, action,
resource, changes} with sorted keys, no whitespace, UTF-8."""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal
from typing import Any

from shared.api.time import iso


def _stored_number(text: str) -> float | int:
    """A float as jsonb returns it: `text` is Python's shortest repr of the float."""
    if "e+" in text or "E+" in text:  # a positive exponent prints as a plain integer
        return int(Decimal(text))
    value = float(text)
    return 0.0 if value == 0 else value  # numeric has no negative zero


def canonical_value(value: Any) -> Any:
    """`value` as plain JSON data in the form it takes after a jsonb round trip. Non-JSON leaves
    (UUIDs, datetimes, decimals) become their text; NaN and infinities are refused (ValueError).

    What is hashed must be exactly what the database hands back, or a stored event no longer
    verifies. PostgreSQL's jsonb keeps numbers as `numeric`, which drops the sign of zero and prints
    every number without an exponent (`1e+308` comes back as a 309-digit integer). Applying that
    normalisation up front means a value is hashed, stored and read back in one form whichever
    database holds it."""
    return json.loads(json.dumps(value, default=str, allow_nan=False), parse_float=_stored_number)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def entry_of(event: Any) -> dict[str, Any]:
    return {
        "id": str(event.id),
        "timestamp": iso(event.timestamp),
        "actor": event.actor,
        "action": event.action,
        "resource": event.resource,
        "changes": event.changes,
    }


def compute_hash(previous_hash: str, entry: dict[str, Any]) -> str:
    digest = hashlib.sha256((previous_hash + canonical_json(entry)).encode("utf-8")).hexdigest()
    return f"sha256:{digest}"
