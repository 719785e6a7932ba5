"""The shared hash chain on SQLite, through the case service's concrete model. There is no advisory
lock there: appends are serialized by SQLite's immediate transactions (one writer at a time)."""

from __future__ import annotations

import threading
import uuid

import pytest
from django.db import connection, connections, transaction

from casemgmt.audit.models import AuditEvent
from casemgmt.tenancy.models import Tenant
from shared.audit import services as audit
from shared.audit.models import ERASED_HASH, GENESIS_HASH


def append(tenant, **changes):
    return audit.audit_append(
        model=AuditEvent, chain=str(tenant.id), actor="u1", action="case:updated",
        resource=f"cases/{uuid.uuid4()}", changes={"name": "Zoë", **changes}, tenant_id=tenant.id,
    )  # fmt: skip


def new_tenant():
    return Tenant.objects.create(name=f"audit-{uuid.uuid4().hex[:8]}")


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_leave_one_linear_chain():
    tenant = new_tenant()
    barrier = threading.Barrier(6)
    failures = []

    def writer(index):
        try:
            barrier.wait()
            for i in range(10):
                with transaction.atomic():
                    # Work before the append, as a service does: the chain is read after it.
                    Tenant.objects.filter(pk=tenant.pk).update(name=f"audit-{index}-{i}")
                    append(tenant, writer=index, i=i)
        except Exception as exc:  # noqa: BLE001 - surfaced by the assertion below
            failures.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    events = list(AuditEvent.objects.filter(chain=str(tenant.id)).order_by("sequence"))
    assert [e.sequence for e in events] == list(range(1, 61))
    assert events[0].previous_hash == GENESIS_HASH
    assert len({e.previous_hash for e in events}) == 60  # no two entries share a parent: no fork
    assert audit.audit_verify_chain(model=AuditEvent, chain=str(tenant.id)).is_valid


@pytest.mark.django_db
def test_a_rolled_back_change_leaves_no_audit_row():
    tenant = new_tenant()
    append(tenant)
    with pytest.raises(RuntimeError), transaction.atomic():  # noqa: PT012 - the raise inside rolls the block back
        append(tenant)
        raise RuntimeError("the change fails after its audit row was written")
    append(tenant)
    events = list(AuditEvent.objects.filter(chain=str(tenant.id)).order_by("sequence"))
    assert [e.sequence for e in events] == [1, 2]
    assert audit.audit_verify(events).is_valid


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("actor", "'mallory'"),
        ("changes", '\'{"name": "Eve"}\''),
        ("previous_hash", "'sha256:' || hex(randomblob(32))"),
    ],
)
def test_tampering_is_detected_at_that_entry(column, value):
    """SQLite has no append-only trigger: an UPDATE goes through, and verification finds it."""
    tenant = new_tenant()
    events = [append(tenant, i=i) for i in range(4)]
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE audit_auditevent SET {column} = {value} WHERE id = %s", [events[2].id.hex])
        assert cursor.rowcount == 1
    result = audit.audit_verify_chain(model=AuditEvent, chain=str(tenant.id))
    assert not result.is_valid and result.first_broken.id == events[2].id


@pytest.mark.django_db
def test_erasure_redacts_without_the_postgresql_flag_and_the_chain_still_verifies():
    tenant = new_tenant()
    events = [append(tenant, i=i) for i in range(4)]
    assert audit.audit_erase(model=AuditEvent, event_ids=[events[1].id], scrub={"actor": "erased"}) == 1
    erased = AuditEvent.objects.get(pk=events[1].id)
    assert erased.erased and erased.hash == ERASED_HASH and erased.actor == "erased"
    result = audit.audit_verify_chain(model=AuditEvent, chain=str(tenant.id))
    assert result.is_valid and result.redacted_entries == 1 and result.entries_checked == 4


TRICKY_VALUES = [
    -0.0,
    0.1,
    1.7976931348623157e308,
    5e-324,
    123456789012345678901234567890.5,
    10**30,
    -(2**63),
    'Zoë \u2028 \U0001f600 \\ "',
    {"nested": [1, [2.5, {"deep": None}], True, False]},
    [],
    {},
]


@pytest.mark.django_db
def test_any_json_value_is_hashed_as_sqlite_hands_it_back():
    """SQLite stores JSON as text: whatever an append hashes must be what a later read returns."""
    tenant = new_tenant()
    for index, value in enumerate(TRICKY_VALUES):
        append(tenant, value=value, index=index)
    result = audit.audit_verify_chain(model=AuditEvent, chain=str(tenant.id))
    assert result.is_valid, result.errors
    assert result.entries_checked == len(TRICKY_VALUES)
