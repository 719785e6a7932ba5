"""Signed checkpoints of the tenants' audit chains (the scheme: shared.audit.checkpoints).

The beat job runs `audit_checkpoint_sweep` in the system context: it reads, per tenant, the head of
the chain and its last checkpoint (a few index lookups), then writes each due
checkpoint, and offers pending ones to the witnesses, in that tenant's own context.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.conf import settings

from casemgmt.audit.models import AuditCheckpoint, AuditEvent
from casemgmt.tenancy import rls
from casemgmt.tenancy.models import Tenant
from shared import ssrf
from shared.audit import checkpoints as shared_checkpoints
from shared.audit.checkpoints import CheckpointPolicy, CheckpointReport
from shared.audit.policy import settings_policy
from shared.audit.services import VerifyResult
from shared.ssrf import Target

LOG = "casemgmt"


def _check_url(url: str) -> Target:
    # The witness URL obeys the connectors' outbound policy (CONNECTOR_ALLOWED_HOSTS).
    return ssrf.check_url(url, allowed_hosts=settings.CONNECTOR_ALLOWED_HOSTS)


def policy() -> CheckpointPolicy:
    return settings_policy(
        log=LOG,
        events=AuditEvent,
        checkpoints=AuditCheckpoint,
        check_url=_check_url,
        timeout=settings.CONNECTOR_TIMEOUT_SECONDS,
    )


def audit_checkpoint_tenant(*, tenant_id: UUID | str) -> AuditCheckpoint | None:
    """Signs the tenant chain's head if due, then offers pending checkpoints to the witnesses."""
    current = policy()
    made = shared_checkpoints.checkpoint_create(current, chain=str(tenant_id), tenant_id=tenant_id)
    shared_checkpoints.checkpoints_witness(current, chain=str(tenant_id))
    return made  # type: ignore[return-value]


def _tenants_to_visit() -> list[Any]:
    current = policy()
    pending = set(
        AuditCheckpoint.objects.filter(witnessed_at__isnull=True).values_list("tenant_id", flat=True)
    ) if current.witnesses else set()  # fmt: skip
    return [
        tenant_id
        for tenant_id in Tenant.objects.order_by("id").values_list("id", flat=True)
        if tenant_id in pending or shared_checkpoints.checkpoint_due(current, str(tenant_id))
    ]


def audit_checkpoint_sweep() -> int:
    """Checkpoints every due tenant chain, each in its tenant's context; returns how many it made."""
    made = 0
    for tenant_id in _tenants_to_visit():
        with rls.tenant_session(tenant_id):
            made += audit_checkpoint_tenant(tenant_id=tenant_id) is not None
    return made


def verify_tenant_chain_checkpointed(
    *, tenant_id: UUID | str, from_checkpoint: bool = False
) -> tuple[VerifyResult, CheckpointReport]:
    return shared_checkpoints.audit_verify_checkpointed(
        policy(), chain=str(tenant_id), from_checkpoint=from_checkpoint
    )
