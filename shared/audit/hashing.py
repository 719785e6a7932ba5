"""The audit chain hash: sha256 over previousHash + canonical JSON of {id, timestamp, actor, action,
resource, changes} with sorted keys, no whitespace, UTF-8."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from shared.api.time import iso


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
