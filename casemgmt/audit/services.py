"""The case service's audit trail: one chain per tenant, appended in the caller's transaction.

The chain's lock is the last lock a write takes (the lock order is in the tenancy services'
docstring): append after every change to rows another writer may hold."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol
from uuid import UUID

from django.db import transaction

from casemgmt.audit.models import AuditEvent
from shared.audit import services as audit
from shared.audit.hashing import compute_hash, entry_of
from shared.audit.models import ERASED_HASH, GENESIS_HASH


class Member(Protocol):
    """A signed-in user (audit does not import the user model: accounts sits above audit)."""

    @property
    def id(self) -> Any: ...

    @property
    def member_tenant_id(self) -> Any: ...


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


def record_deferred(
    *, tenant_id: UUID | str, actor: str, action: str, resource: str, changes: dict[str, Any], key: str
) -> audit.DeferredAppend:
    """`record` whose `changes[key]` the caller's statement computes (PostgreSQL): see
    `shared.audit.services.DeferredAppend`. The chain lock is taken when that statement runs."""
    return audit.audit_append_deferred(
        model=AuditEvent,
        chain=str(tenant_id),
        actor=actor,
        action=action,
        resource=resource,
        changes=changes,
        key=key,
        tenant_id=tenant_id,
    )


def mark_actor_events_deleted(*, tenant_id: UUID | str, actor: str, deleted: bool) -> int:
    """Marks (or unmarks) every event `actor` recorded in the tenant's chain as deleted. Reads show
    the mark; verification ignores it, since it is not part of what each hash covers."""
    return audit.audit_mark_deleted(model=AuditEvent, chain=str(tenant_id), actor=actor, deleted=deleted)


def verify_tenant_chain(*, tenant_id: UUID | str) -> audit.VerifyResult:
    return audit.audit_verify_chain(model=AuditEvent, chain=str(tenant_id))


def verify_events_in_chain(*, tenant_id: UUID | str, events: Iterable[AuditEvent]) -> audit.VerifyResult:
    """Verifies a subset of a tenant chain (one case's events) in the context of the whole chain:
    each event must hash to itself, and its previousHash must be the stored hash of the event just
    before it in the chain (whatever that event concerns). Erased events count as redacted."""
    events = list(events)
    result = audit.VerifyResult(is_valid=True)
    previous = dict(
        AuditEvent.objects.filter(
            chain=str(tenant_id), sequence__in=[e.sequence - 1 for e in events]
        ).values_list("sequence", "hash")
    )
    for event in events:
        result.entries_checked += 1
        result.first_entry = result.first_entry or event
        result.last_entry = event
        label = f"entry {event.id} (sequence {event.sequence})"
        expected = GENESIS_HASH if event.sequence == 1 else previous.get(event.sequence - 1)
        if expected is None:
            _break(result, event, f"{label}: the preceding entry is missing from the chain")
        elif expected != ERASED_HASH and event.previous_hash != expected:
            _break(result, event, f"{label}: previousHash does not match the preceding entry")
        if event.erased and event.hash == ERASED_HASH:
            result.redacted_entries += 1
        elif compute_hash(event.previous_hash, entry_of(event)) != event.hash:
            _break(result, event, f"{label}: hash does not match its content")
    return result


def _break(result: audit.VerifyResult, event: AuditEvent, message: str) -> None:
    result.is_valid = False
    result.first_broken = result.first_broken or event
    audit.note_error(result, message)


@transaction.atomic
def audit_record_verification(*, user: Member, scope: str, result: audit.VerifyResult) -> AuditEvent:
    return record(
        tenant_id=user.member_tenant_id,
        actor=str(user.id),
        action="audit:verified",
        resource=scope,
        changes={"isValid": result.is_valid, "entriesChecked": result.entries_checked},
    )


@transaction.atomic
def audit_record_export(*, user: Member, scope: str, params: dict[str, Any]) -> AuditEvent:
    return record(
        tenant_id=user.member_tenant_id,
        actor=str(user.id),
        action="audit:exported",
        resource=scope,
        changes=params,
    )
