"""Audit checkpoints on SQLite, as `make run` does it: the per-chain lock is SQLite's single writer
(immediate transactions), so two jobs at once still make one checkpoint, and verification catches
rewritten history at it."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from casemgmt.audit.checkpoints import audit_checkpoint_tenant, verify_tenant_chain_checkpointed
from casemgmt.audit.models import AuditCheckpoint, AuditEvent
from casemgmt.audit.services import record
from shared.audit.hashing import compute_hash, entry_of


@pytest.mark.django_db(transaction=True)
def test_two_jobs_make_one_checkpoint_and_rewritten_history_fails_at_it(settings, tenant):
    settings.AUDIT_CHECKPOINT_EVERY_EVENTS = 3
    for n in range(3):
        record(tenant_id=tenant.id, actor="robot", action="test:appended", resource=f"things/{n}")
    barrier = threading.Barrier(2)

    def job(_):
        try:
            barrier.wait(timeout=30)
            return audit_checkpoint_tenant(tenant_id=tenant.id)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=2) as pool:
        made = [m for m in pool.map(job, range(2)) if m is not None]
    assert len(made) == 1 and AuditCheckpoint.objects.filter(tenant=tenant).count() == 1
    result, report = verify_tenant_chain_checkpointed(tenant_id=tenant.id)
    assert result.is_valid and report.checked == 1
    # no trigger on SQLite: the attacker changes the first event and recomputes every later hash
    previous = None
    for event in AuditEvent.objects.filter(tenant=tenant).order_by("sequence"):
        if previous is None:
            event.resource = "cases/forged"
            previous = event.previous_hash
        event.previous_hash, event.hash = previous, compute_hash(previous, entry_of(event))
        AuditEvent.objects.filter(pk=event.pk).update(
            resource=event.resource, previous_hash=event.previous_hash, hash=event.hash
        )
        previous = event.hash
    result, report = verify_tenant_chain_checkpointed(tenant_id=tenant.id)
    assert not result.is_valid and report.first_invalid.sequence == made[0].sequence
