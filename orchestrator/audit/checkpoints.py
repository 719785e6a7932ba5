"""Signed checkpoints of the orchestrator's audit chain (the scheme: shared.audit.checkpoints).

There is no beat: the recovery sweep, which one agent at a time runs, calls
`audit_checkpoint_sweep` on each turn. Making a checkpoint takes its own lock and checks again
under it, so a beat running the sweep as well still makes one."""

from __future__ import annotations

import functools

from django.conf import settings

from orchestrator.audit.models import CHAIN, AuditCheckpoint, AuditEvent
from shared import ssrf
from shared.audit import checkpoints as shared_checkpoints
from shared.audit.checkpoints import CheckpointPolicy, CheckpointReport, Witness
from shared.audit.services import VerifyResult
from shared.audit.signing import Keyring, parse_keys
from shared.audit.witness import file_witness, webhook_witness

LOG = "orchestrator"


@functools.lru_cache(maxsize=4)
def _keyring(entries: tuple[str, ...]) -> Keyring:
    return parse_keys(list(entries))


def _check_url(url: str) -> ssrf.Target:
    # The witness is reached under the rule of outbound webhooks (public addresses only, unless
    # WEBHOOK_ALLOW_PRIVATE_TARGETS), built here from shared.ssrf: audit sits below webhooks.
    return ssrf.check_url(url, allowed_hosts=(), allow_private=settings.WEBHOOK_ALLOW_PRIVATE_TARGETS)


def _witnesses() -> tuple[Witness, ...]:
    found: list[Witness] = []
    if settings.AUDIT_WITNESS_FILE:
        found.append(file_witness(settings.AUDIT_WITNESS_FILE))
    if settings.AUDIT_WITNESS_URL:
        found.append(
            webhook_witness(
                settings.AUDIT_WITNESS_URL, check_url=_check_url, timeout=settings.WEBHOOK_TIMEOUT_SECONDS
            )
        )
    return tuple(found)


def policy() -> CheckpointPolicy:
    """Built from the settings on each use, so a changed setting (a rotated key) applies at once."""
    return CheckpointPolicy(
        log=LOG,
        events=AuditEvent,
        checkpoints=AuditCheckpoint,
        keyring=_keyring(tuple(settings.AUDIT_SIGNING_KEYS)),
        every_events=settings.AUDIT_CHECKPOINT_EVERY_EVENTS,
        every_seconds=settings.AUDIT_CHECKPOINT_INTERVAL_SECONDS,
        witnesses=_witnesses(),
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
