"""The shared hash chain on PostgreSQL, through the case service's concrete model."""

import threading
import uuid

import pytest
from django.db import DatabaseError, connection, connections, transaction
from django.test.utils import CaptureQueriesContext

from casemgmt.audit.models import AuditEvent
from casemgmt.tenancy.models import Tenant
from shared.audit import services as audit
from shared.audit.hashing import canonical_json, compute_hash, entry_of
from shared.audit.models import ERASED_HASH, GENESIS_HASH


def append(tenant, n=1, **kw):
    return [
        audit.audit_append(
            model=AuditEvent, chain=str(tenant.id), actor=kw.get("actor", "u1"), action="case:updated",
            resource=f"cases/{uuid.uuid4()}", changes={"i": i, "name": "Zoë"}, tenant_id=tenant.id,
        )
        for i in range(n)
    ]  # fmt: skip


@pytest.fixture
def chain_tenant(db):
    return Tenant.objects.create(name=f"audit-{uuid.uuid4().hex[:8]}")


def test_first_entry_links_to_genesis_and_hash_covers_canonical_fields(chain_tenant):
    first, second = append(chain_tenant, 2)
    assert first.previous_hash == GENESIS_HASH
    assert second.previous_hash == first.hash
    entry = entry_of(first)
    assert set(entry) == {"id", "timestamp", "actor", "action", "resource", "changes"}
    assert first.hash == compute_hash(GENESIS_HASH, entry)
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'
    stored = AuditEvent.objects.get(pk=first.pk)
    assert compute_hash(stored.previous_hash, entry_of(stored)) == stored.hash


def test_verify_accepts_an_intact_chain(chain_tenant):
    append(chain_tenant, 5)
    result = audit.audit_verify_chain(model=AuditEvent, chain=str(chain_tenant.id))
    assert result.is_valid and result.entries_checked == 5 and result.errors == []


@pytest.mark.django_db(transaction=True)
def test_eight_concurrent_writers_leave_one_linear_chain():
    tenant = Tenant.objects.create(name=f"audit-{uuid.uuid4().hex[:8]}")
    barrier = threading.Barrier(8)
    failures = []

    def writer():
        try:
            barrier.wait()
            for _ in range(10):
                with transaction.atomic():
                    append(tenant)
        except Exception as exc:  # noqa: BLE001 - surfaced by the assertion below
            failures.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    events = list(AuditEvent.objects.filter(chain=str(tenant.id)).order_by("sequence"))
    assert [e.sequence for e in events] == list(range(1, 81))
    assert len({e.previous_hash for e in events}) == 80  # no two entries share a parent: no fork
    assert audit.audit_verify(events).is_valid
    # Each timestamp is taken under the chain lock, so time never runs backwards along the chain.
    assert all(a.timestamp <= b.timestamp for a, b in zip(events, events[1:], strict=False))


def test_an_append_is_one_statement_with_no_savepoint(chain_tenant):
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        append(chain_tenant)
    assert len(queries.captured_queries) == 1, [q["sql"] for q in queries.captured_queries]


FIELDS = {
    "actor": "'mallory'",
    "action": "'case:deleted'",
    "resource": "'cases/other'",
    "changes": "'{\"i\": 99}'::jsonb",
    "timestamp": "timestamp + interval '1 second'",
    "hash": "'sha256:' || repeat('a', 64)",
    "previous_hash": "'sha256:' || repeat('b', 64)",
}


@pytest.mark.parametrize("field", sorted(FIELDS))
@pytest.mark.parametrize("position", [0, 2, 4])
def test_tampering_any_field_of_any_event_is_detected_at_that_entry(chain_tenant, field, position):
    events = append(chain_tenant, 5)
    target = events[position]
    with connection.cursor() as cursor:
        cursor.execute(
            "SET LOCAL session_replication_role = replica"
        )  # bypass the trigger, as an attacker with SQL would
        cursor.execute(f"UPDATE audit_auditevent SET {field} = {FIELDS[field]} WHERE id = %s", [target.id])
        cursor.execute("SET LOCAL session_replication_role = origin")
    result = audit.audit_verify_chain(model=AuditEvent, chain=str(chain_tenant.id))
    assert not result.is_valid
    assert result.first_broken.id == target.id
    assert str(target.id) in result.errors[0]


def tamper(event, field, value_sql):
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")  # as an attacker with SQL would
        cursor.execute(f"UPDATE audit_auditevent SET {field} = {value_sql} WHERE id = %s", [event.id])
        cursor.execute("SET LOCAL session_replication_role = origin")


def test_verification_reads_a_long_chain_in_chunks_and_finds_a_change_in_a_late_chunk(chain_tenant):
    events = append(chain_tenant, 23)
    chain = str(chain_tenant.id)
    intact = audit.audit_verify_chain(model=AuditEvent, chain=chain, chunk_size=5)
    assert intact.is_valid and intact.entries_checked == 23
    assert (intact.first_entry.id, intact.last_entry.id) == (events[0].id, events[-1].id)
    assert intact.last_entry.sequence == events[-1].sequence and intact.last_entry.hash == events[-1].hash
    tamper(events[21], "resource", "'cases/forged'")
    result = audit.audit_verify_chain(model=AuditEvent, chain=chain, chunk_size=5)
    assert not result.is_valid and result.entries_checked == 23
    assert result.first_broken.id == events[21].id
    assert result.errors == [
        f"entry {events[21].id} (sequence {events[21].sequence}): hash does not match its content"
    ]


def test_a_chain_broken_everywhere_lists_the_first_errors_and_counts_the_rest(chain_tenant):
    events = append(chain_tenant, audit.MAX_ERRORS + 10)
    with connection.cursor() as cursor:  # every entry's content changed: every hash is wrong
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(
            "UPDATE audit_auditevent SET actor = 'mallory' WHERE chain = %s", [str(chain_tenant.id)]
        )
        cursor.execute("SET LOCAL session_replication_role = origin")
    result = audit.audit_verify_chain(model=AuditEvent, chain=str(chain_tenant.id), chunk_size=7)
    assert not result.is_valid and result.entries_checked == len(events)
    assert result.first_broken.id == events[0].id
    assert len(result.errors) == audit.MAX_ERRORS + 1
    assert result.errors[-1] == "... and 10 more errors not listed"


def test_trigger_refuses_update_and_delete(chain_tenant):
    (event,) = append(chain_tenant)
    for statement in (
        "UPDATE audit_auditevent SET actor = 'x' WHERE id = %s",
        "DELETE FROM audit_auditevent WHERE id = %s",
    ):
        with (
            pytest.raises(DatabaseError, match="append-only"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(statement, [event.id])
    assert AuditEvent.objects.get(pk=event.pk).actor == "u1"


def test_erasure_path_redacts_and_verification_keeps_checking_links(chain_tenant):
    events = append(chain_tenant, 5)
    assert (
        audit.audit_erase(model=AuditEvent, event_ids=[events[1].id, events[2].id], scrub={"actor": "erased"})
        == 2
    )
    erased = AuditEvent.objects.get(pk=events[1].id)
    assert erased.hash == ERASED_HASH and erased.erased and erased.actor == "erased"
    result = audit.audit_verify_chain(model=AuditEvent, chain=str(chain_tenant.id))
    assert result.is_valid and result.redacted_entries == 2 and result.entries_checked == 5
    # A break after the redacted stretch is still found.
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute("UPDATE audit_auditevent SET actor = 'mallory' WHERE id = %s", [events[4].id])
        cursor.execute("SET LOCAL session_replication_role = origin")
    result = audit.audit_verify_chain(model=AuditEvent, chain=str(chain_tenant.id))
    assert not result.is_valid and result.first_broken.id == events[4].id


def test_exports_stream_every_event(chain_tenant):
    append(chain_tenant, 3)
    queryset = AuditEvent.objects.filter(chain=str(chain_tenant.id)).order_by("sequence")
    csv_text = "".join(audit.export_csv(queryset))
    assert csv_text.splitlines()[0] == "id,timestamp,actor,action,resource,changes,hash,previousHash"
    assert len(csv_text.strip().splitlines()) == 4
    import json

    rows = json.loads("".join(audit.export_json(queryset)))
    assert [r["hash"] for r in rows] == [e.hash for e in queryset]
