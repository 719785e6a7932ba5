"""The bytes a webhook receives: the JSON body `{event, timestamp, data}` and its signature.

Task and DAG events: `data` carries every `RUN_KEYS` key (absent ones as null) plus whatever else the
emitter recorded. Agent events (see docs/decisions.md, "Webhooks and events"):
`data` = {agent_id, status, last_heartbeat, queues, tags}.
"""

from __future__ import annotations

import json
from typing import Any

from orchestrator.events.models import Event
from shared import signing
from shared.api.time import iso

RUN_KEYS = (
    "run_id",
    "dag_id",
    "task_id",
    "task_run_id",
    "status",
    "start_time",
    "end_time",
    "duration_seconds",
)
AGENT_KEYS = ("agent_id", "status", "last_heartbeat", "queues", "tags")


def event_data(event: Event) -> dict[str, Any]:
    raw = dict(event.data or {})
    keys = AGENT_KEYS if event.type.startswith("agent.") else RUN_KEYS
    data = {key: raw.pop(key, None) for key in keys}
    data.update(raw)
    return data


def payload_body(event: Event) -> str:
    payload = {"event": event.type, "timestamp": iso(event.occurred_at), "data": event_data(event)}
    return json.dumps(payload, separators=(",", ":"), sort_keys=False, default=str)


def signature(secret: str, body: bytes) -> str:
    """`sha256=<hex HMAC-SHA256 of the raw body>`, keyed with the registration's secret."""
    return signing.sha256_sign(secret, body)
