"""The case service's audit trail: one chain per tenant, appended in the caller's transaction."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from casemgmt.audit.models import AuditEvent
from shared.audit import services as audit


def record(
    *, tenant_id: UUID | str, actor: str, action: str, resource: str, changes: dict[str, Any] | None = None
) -> AuditEvent:
    return audit.audit_append(  # type: ignore[return-value]
        model=AuditEvent,
        chain=str(tenant_id),
        actor=actor,
        action=action,
        resource=resource,
        changes=changes,
        tenant_id=tenant_id,
    )


def verify_tenant_chain(*, tenant_id: UUID | str) -> audit.VerifyResult:
    return audit.audit_verify_chain(model=AuditEvent, chain=str(tenant_id))
