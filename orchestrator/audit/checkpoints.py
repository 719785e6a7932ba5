"""Signed checkpoints of the orchestrator's audit chain (the scheme: shared.audit.checkpoints).

There is no beat: the recovery sweep, which one agent at a time runs, calls
`audit_checkpoint_sweep` on each turn. Making a checkpoint takes its own lock and checks again
under it, so a beat running the sweep as well still makes one."""

from __future__ import annotations

from django.conf import settings

from orchestrator.audit.models import CHAIN, AuditCheckpoint, AuditEvent
from shared import ssrf
from shared.audit import checkpoints as shared_checkpoints
from shared.audit.checkpoints import CheckpointPolicy, CheckpointReport
from shared.audit.policy import settings_policy
from shared.audit.services import VerifyResult

LOG = "orchestrator"


def _check_url(url: str) -> ssrf.Target:
    # The witness is reached under the rule of outbound webhooks (public addresses only, unless
    # WEBHOOK_ALLOW_PRIVATE_TARGETS), built here from shared.ssrf: audit sits below webhooks.
    return ssrf.check_url(url, allowed_hosts=(), allow_private=settings.WEBHOOK_ALLOW_PRIVATE_TARGETS)


def policy() -> CheckpointPolicy:
    return settings_policy(
        log=LOG,
        events=AuditEvent,
        checkpoints=AuditCheckpoint,
        check_url=_check_url,
        timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
    )


def audit_checkpoint_sweep() -> int:
    """Signs the chain's head if due and offers pending checkpoints to the witnesses; returns how
    many checkpoints it made (0 or 1)."""
    current = policy()
    made = shared_checkpoints.checkpoint_create(current, chain=CHAIN)
    shared_checkpoints.checkpoints_witness(current, chain=CHAIN)
    return int(made is not None)


def audit_chain_verify_checkpointed(
    *, from_checkpoint: bool = False
) -> tuple[VerifyResult, CheckpointReport]:
    return shared_checkpoints.audit_verify_checkpointed(
        policy(), chain=CHAIN, from_checkpoint=from_checkpoint
    )
