"""The orchestrator's audit trail: one chain, appended in the caller's transaction.

The chain's lock is the last lock a write takes (the lock order is in `orchestrator.runs.services`):
append after every change to rows another writer may hold."""

from __future__ import annotations

from typing import Any

from orchestrator.audit.models import CHAIN, AuditEvent
from shared.audit import services as audit

# Writes that no request caused (scheduler ticks, management commands) are recorded under this name.
SYSTEM_ACTOR = "system"


def record(*, actor: str, action: str, resource: str, changes: dict[str, Any] | None = None) -> AuditEvent:
    """Appends one event. Call it inside the transaction of the change it records, so both commit
    or roll back together. `changes` must never hold secrets (webhook secrets or headers, key values)."""
    return audit.audit_append(  # type: ignore[return-value]
        model=AuditEvent, chain=CHAIN, actor=actor, action=action, resource=resource, changes=changes
    )
