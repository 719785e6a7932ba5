"""Signed checkpoints: the audit chain anchored outside the database.

The hash chain alone proves only that rows agree with each other: whoever may write the table can
change an event and recompute every later hash, and the walk still says valid. A checkpoint is an
Ed25519 signature, with a key the database never holds, over the chain's head (position and hash)
at a moment; once one exists, changing any event at or before its position changes the hash there,
which no longer matches what was signed. Copies sent to outside witnesses (an append-only file, a
webhook) survive even an attacker who also deletes checkpoint rows.

When: a chain is due once `every_events` events lie past its last checkpoint, or the oldest of them
is `every_seconds` old. Making one takes a transaction-scoped lock of its own per chain (never the
chain's append lock, so appends are not held up) and checks again under it whether one is due, so
two jobs running at once write one checkpoint; the unique (chain, sequence) constraint is the
backstop. The head read is the last committed event: appends commit in chain order, so every event
before it has committed too.

Verification: every checkpoint's signature must verify with a configured key, and the chain's hash
at its position must be the signed head hash. The event walk then either covers the whole chain, or
starts after the last checkpoint that held (`from_checkpoint`), trusting the signed hash as the
previous link: O(events since then) instead of O(chain).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from rest_framework import serializers

from shared.api.querying import QueryChoiceField, QuerySerializer
from shared.api.time import iso, now_ms
from shared.audit.models import ERASED_HASH, AuditCheckpointBase, AuditEventBase
from shared.audit.services import (
    VERIFY_CHUNK_SIZE,
    ChainEntry,
    VerifyResult,
    audit_verify,
    audit_verify_chain,
)
from shared.audit.signing import Keyring, checkpoint_claim, claim_message
from shared.locks import lock_name

logger = logging.getLogger(__name__)

Witness = Callable[[dict[str, Any]], None]


class WitnessError(Exception):
    """An outside witness did not take a checkpoint (its message never holds a URL or key)."""


@dataclass(frozen=True)
class CheckpointPolicy:
    """One service's checkpoint settings: its chain and checkpoint models, keys, cadence, witnesses."""

    log: str
    events: type[AuditEventBase]
    checkpoints: type[AuditCheckpointBase]
    keyring: Keyring
    every_events: int
    every_seconds: float
    witnesses: tuple[Witness, ...] = ()


def _head(policy: CheckpointPolicy, chain: str) -> tuple[int, str, bool] | None:
    return (
        policy.events.objects.filter(chain=chain)
        .order_by("-sequence")
        .values_list("sequence", "hash", "erased")
        .first()
    )


def _last_position(policy: CheckpointPolicy, chain: str) -> int:
    last = (
        policy.checkpoints.objects.filter(chain=chain)
        .order_by("-sequence")
        .values_list("sequence", flat=True)
        .first()
    )
    return last or 0


def checkpoint_due(policy: CheckpointPolicy, chain: str) -> bool:
    head = _head(policy, chain)
    last = _last_position(policy, chain)
    if head is None or head[0] <= last:
        return False
    if head[0] - last >= policy.every_events:
        return True
    oldest = (
        policy.events.objects.filter(chain=chain, sequence=last + 1)
        .values_list("timestamp", flat=True)
        .first()
    )
    return oldest is None or now_ms() - oldest >= timedelta(seconds=policy.every_seconds)


def checkpoint_create(policy: CheckpointPolicy, *, chain: str, **extra: Any) -> AuditCheckpointBase | None:
    """Signs the chain's head when a checkpoint is due; None when none is (or another job wrote it).
    `extra` fills the concrete model's own columns (the case service's tenant)."""
    with transaction.atomic():
        lock_name(f"{policy.checkpoints._meta.db_table}:{chain}")
        if not checkpoint_due(policy, chain):
            return None
        head = _head(policy, chain)
        if head is None or head[2]:
            # An erased head no longer shows its hash (only the next event's link keeps it): the
            # next checkpoint, after one more event, covers it.
            return None
        sequence, head_hash, _ = head
        row = policy.checkpoints(
            chain=chain, sequence=sequence, head_hash=head_hash, created_at=now_ms(),
            key_id=policy.keyring.signing_key_id, **extra,
        )  # fmt: skip
        row.signature = policy.keyring.sign(claim_message(claim_of(policy, row)))
        try:
            with transaction.atomic():
                row.save(force_insert=True)
        except IntegrityError:  # written meanwhile by a job that did not take the lock (none does)
            return None
        return row


def claim_of(policy: CheckpointPolicy, row: AuditCheckpointBase) -> dict[str, Any]:
    return checkpoint_claim(
        log=policy.log, chain=row.chain, sequence=row.sequence, head_hash=row.head_hash,
        created_at=row.created_at, key_id=row.key_id,
    )  # fmt: skip


def checkpoint_out(policy: CheckpointPolicy, row: AuditCheckpointBase) -> dict[str, Any]:
    """The claim and its signature: what the API lists and witnesses receive. The signed message is
    the canonical JSON of this object without `signature`."""
    return {**claim_of(policy, row), "signature": row.signature}


def checkpoints_witness(policy: CheckpointPolicy, *, chain: str, limit: int = 100) -> int:
    """Hands checkpoints not yet witnessed to every witness, oldest first, and marks them; stops at
    the first refusal (the next run tries again). A witness may so see a checkpoint twice (when a
    later one of several refused it): each is identified by its chain and sequence."""
    if not policy.witnesses:
        return 0
    pending = policy.checkpoints.objects.filter(chain=chain, witnessed_at__isnull=True).order_by("sequence")
    sent = 0
    for row in pending[:limit]:
        line = checkpoint_out(policy, row)
        try:
            for witness in policy.witnesses:
                witness(line)
        except (WitnessError, OSError) as exc:
            reason = str(exc) if isinstance(exc, WitnessError) else exc.__class__.__name__
            logger.warning("Audit checkpoint %s@%s not witnessed yet: %s", chain, row.sequence, reason)
            break
        policy.checkpoints.objects.filter(pk=row.pk).update(witnessed_at=now_ms())
        sent += 1
    return sent


@dataclass
class CheckpointReport:
    mode: str = "full"  # "full": every event walked; "checkpoint": from the last checkpoint that held
    checked: int = 0
    verified_from: int = 0  # the sequence the event walk started after (0: the chain's start)
    first_invalid: AuditCheckpointBase | None = None
    reason: str = ""
    errors: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return self.first_invalid is None


def _signed_hash_problem(
    policy: CheckpointPolicy, row: AuditCheckpointBase, stored: dict[int, tuple[str, str, bool]]
) -> str:
    """Why a checkpoint does not hold, or ""."""
    if row.key_id not in policy.keyring.key_ids:
        return f"signed with key {row.key_id!r}, which is not configured"
    if not policy.keyring.verify(row.key_id, claim_message(claim_of(policy, row)), row.signature):
        return "its signature does not verify"
    event = stored.get(row.sequence)
    if event is None:
        return "the chain has no event at its position"
    event_hash, _, erased = event
    if erased and event_hash == ERASED_HASH:
        after = stored.get(row.sequence + 1)
        if after is None:
            return ""  # the erased head's hash survives nowhere yet: nothing to compare
        event_hash = after[1]  # the next event's link still names the erased event's hash
    if event_hash != row.head_hash:
        return "the chain's hash at its position is not the signed head hash"
    return ""


def checkpoints_check(
    policy: CheckpointPolicy, *, chain: str, report: CheckpointReport
) -> AuditCheckpointBase | None:
    """Checks the chain's checkpoints in order up to the first that fails (noted in `report`);
    returns the last one that held. Two small queries, whatever the chain's length."""
    rows = list(policy.checkpoints.objects.filter(chain=chain).order_by("sequence"))
    positions = {row.sequence for row in rows} | {row.sequence + 1 for row in rows}
    stored = {
        sequence: (event_hash, previous_hash, erased)
        for sequence, event_hash, previous_hash, erased in policy.events.objects.filter(
            chain=chain, sequence__in=positions
        ).values_list("sequence", "hash", "previous_hash", "erased")
    }
    anchor = None
    for row in rows:
        report.checked += 1
        problem = _signed_hash_problem(policy, row, stored)
        if problem:
            report.first_invalid, report.reason = row, problem
            report.errors.append(f"checkpoint at sequence {row.sequence} ({row.key_id}): {problem}")
            break
        anchor = row
    return anchor


def audit_verify_checkpointed(
    policy: CheckpointPolicy,
    *,
    chain: str,
    from_checkpoint: bool = False,
    chunk_size: int = VERIFY_CHUNK_SIZE,
) -> tuple[VerifyResult, CheckpointReport]:
    """The chain walk (`audit_verify_chain`, or from the last checkpoint that held) together with the
    checkpoints' check; a failing checkpoint makes the whole result invalid."""
    report = CheckpointReport(mode="checkpoint" if from_checkpoint else "full")
    anchor = checkpoints_check(policy, chain=chain, report=report)
    if from_checkpoint and anchor is not None:
        report.verified_from = anchor.sequence
        result = _walk_after(policy, chain, anchor, chunk_size)
    else:
        result = audit_verify_chain(model=policy.events, chain=chain, chunk_size=chunk_size)
    if report.first_invalid is not None:
        result.is_valid = False
        result.errors[:0] = report.errors
        result.first_broken = result.first_broken or _entry_at(policy, chain, report.first_invalid.sequence)
    return result, report


def _walk_after(
    policy: CheckpointPolicy, chain: str, anchor: AuditCheckpointBase, chunk_size: int
) -> VerifyResult:
    # In a transaction for the same reason as audit_verify_chain: a server-side cursor declared
    # outside one is materialized whole before the first row arrives.
    with transaction.atomic():
        rows = (
            policy.events.objects.filter(chain=chain, sequence__gt=anchor.sequence)
            .order_by("sequence")
            .values_list(*ChainEntry._fields)
            .iterator(chunk_size=chunk_size)
        )
        return audit_verify((ChainEntry(*row) for row in rows), expected_previous=anchor.head_hash)


def _entry_at(policy: CheckpointPolicy, chain: str, sequence: int) -> ChainEntry | None:
    row = (
        policy.events.objects.filter(chain=chain, sequence=sequence).values_list(*ChainEntry._fields).first()
    )
    return ChainEntry(*row) if row else None


def checkpoint_report_out(report: CheckpointReport) -> dict[str, Any]:
    """The `checkpoints` member of a chain verification's response."""
    invalid = report.first_invalid
    return {
        "mode": report.mode,
        "checked": report.checked,
        "valid": report.valid,
        "verified_from": report.verified_from,
        "first_invalid": None
        if invalid is None
        else {
            "sequence": invalid.sequence,
            "created_at": iso(invalid.created_at),
            "key_id": invalid.key_id,
            "reason": report.reason,
        },
    }


VERIFY_FROM = ("genesis", "checkpoint")


class VerifyFromSerializer(QuerySerializer):
    """A verify view's `FilterSerializer`: `?from=` absent or `genesis` walks the whole chain;
    `checkpoint` starts after the last checkpoint that holds. Read into `from_checkpoint`
    (`from`, a Python keyword, cannot be a declared field)."""

    def get_fields(self) -> dict[str, serializers.Field]:
        message = "from must be genesis or checkpoint"
        return {"from": QueryChoiceField(choices=VERIFY_FROM, message=message, default="genesis")}

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        return {"from_checkpoint": attrs["from"] == "checkpoint"}
