"""Disabling a principal marks the audit events it recorded as deleted; enabling it clears the mark.
The mark lies outside the hashed entry, so both verifications still pass."""

import json

import pytest
from django.db import DatabaseError, connection, transaction

from casemgmt.audit.models import AuditEvent
from shared.audit.services import DELETION_MARK_SETTING

pytestmark = pytest.mark.django_db


@pytest.fixture
def worker(tenant, make_user):
    return make_user(tenant, permissions=["cases:create", "cases:read", "cases:update"])


@pytest.fixture
def worker_case(api, worker, case_type):
    """A case the worker created and updated through the API: two events with the worker as actor."""
    client = api(worker)
    body = {"caseTypeId": str(case_type.id), "data": {"applicant": {"name": "Ada"}, "amount": 1}}
    created = client.post("/cases", body, format="json")
    assert created.status_code == 201, created.content
    case_id = created.json()["id"]
    patched = client.patch(f"/cases/{case_id}/data", {"data": {"amount": 2}, "version": 1}, format="json")
    assert patched.status_code == 200, patched.content
    return case_id


def flags_by_actor(tenant):
    rows = AuditEvent.objects.filter(tenant=tenant).values_list("actor", "deleted")
    flags: dict[str, set[bool]] = {}
    for actor, deleted in rows:
        flags.setdefault(actor, set()).add(deleted)
    return flags


def listed(client, actor):
    body = client.get("/audit", {"actor": actor}).json()
    assert body["total"] >= 1
    return body["data"]


def assert_both_verifications_pass(client, case_id):
    assert client.get("/audit/verify-chain").json()["status"] == "valid"
    assert client.post(f"/cases/{case_id}/events/verify").json()["isValid"] is True


def test_disable_marks_the_principals_events_deleted_and_the_chain_still_verifies(
    api, admin_user, tenant, worker, worker_case
):
    admin = api(admin_user)
    hashes = dict(AuditEvent.objects.filter(tenant=tenant).values_list("id", "hash"))
    assert admin.post(f"/admin/principals/{worker.id}/disable").status_code == 204

    flags = flags_by_actor(tenant)
    assert flags.pop(str(worker.id)) == {True}
    assert all(value == {False} for value in flags.values())  # nobody else's events are touched
    events = listed(admin, str(worker.id))
    assert {e["action"] for e in events} == {"case:created", "case:updated"}
    assert all(e["deleted"] is True for e in events)
    assert all("deleted" not in e for e in listed(admin, str(admin_user.id)))
    case_trail = admin.get(f"/cases/{worker_case}/events").json()["data"]
    assert [e.get("deleted", False) for e in case_trail] == [True, True]

    disabled = AuditEvent.objects.get(action="user:disabled", resource=f"principals/{worker.id}")
    assert disabled.actor == str(admin_user.id) and not disabled.deleted
    assert disabled.changes == {"auditEventsMarkedDeleted": 2}
    # Nothing that is hashed changed.
    for event_id, digest in hashes.items():
        assert AuditEvent.objects.get(pk=event_id).hash == digest
    assert_both_verifications_pass(admin, worker_case)


def test_enable_clears_the_mark_and_the_chain_still_verifies(api, admin_user, tenant, worker, worker_case):
    admin = api(admin_user)
    assert admin.post(f"/admin/principals/{worker.id}/disable").status_code == 204
    assert admin.post(f"/admin/principals/{worker.id}/enable").status_code == 204

    assert flags_by_actor(tenant)[str(worker.id)] == {False}
    assert all("deleted" not in e for e in listed(admin, str(worker.id)))
    enabled = AuditEvent.objects.get(action="user:enabled", resource=f"principals/{worker.id}")
    assert enabled.changes == {"auditEventsUnmarked": 2}
    assert_both_verifications_pass(admin, worker_case)

    # Disabled again later: events recorded meanwhile are marked too.
    assert (
        api(worker).patch(f"/cases/{worker_case}/data", {"data": {"amount": 3}}, format="json").status_code
        == 200
    )
    assert admin.post(f"/admin/principals/{worker.id}/disable").status_code == 204
    assert flags_by_actor(tenant)[str(worker.id)] == {True}
    assert AuditEvent.objects.filter(action="user:disabled").order_by("-sequence")[0].changes == {
        "auditEventsMarkedDeleted": 3
    }
    assert_both_verifications_pass(admin, worker_case)


def test_a_repeated_disable_marks_nothing_twice(api, admin_user, worker, worker_case):
    admin = api(admin_user)
    assert admin.post(f"/admin/principals/{worker.id}/disable").status_code == 204
    assert admin.post(f"/admin/principals/{worker.id}/disable").status_code == 204
    assert AuditEvent.objects.filter(action="user:disabled", resource=f"principals/{worker.id}").count() == 1


def test_json_export_carries_the_mark(api, admin_user, worker, worker_case):
    admin = api(admin_user)
    assert admin.post(f"/admin/principals/{worker.id}/disable").status_code == 204
    response = admin.get("/audit/export", {"format": "json"})
    events = json.loads(b"".join(response.streaming_content))
    assert {e.get("deleted", False) for e in events if e["actor"] == str(worker.id)} == {True}


def update(sql, params, *, mark_setting):
    with transaction.atomic(), connection.cursor() as cursor:
        if mark_setting:
            cursor.execute("SELECT set_config(%s, 'on', true)", [DELETION_MARK_SETTING])
        cursor.execute(sql, params)


def test_the_trigger_allows_the_deleted_column_alone_and_only_with_the_setting(worker, worker_case):
    event = AuditEvent.objects.filter(actor=str(worker.id)).first()
    flip = "UPDATE audit_auditevent SET deleted = true WHERE id = %s"
    with pytest.raises(DatabaseError, match="append-only"):
        update(flip, [event.id], mark_setting=False)
    for statement in (
        "UPDATE audit_auditevent SET deleted = true, actor = 'mallory' WHERE id = %s",
        "UPDATE audit_auditevent SET changes = '{}'::jsonb WHERE id = %s",
        "UPDATE audit_auditevent SET erased = true WHERE id = %s",
    ):
        with pytest.raises(DatabaseError, match="append-only"):
            update(statement, [event.id], mark_setting=True)
    with pytest.raises(DatabaseError, match="append-only"):
        update("DELETE FROM audit_auditevent WHERE id = %s", [event.id], mark_setting=True)
    update(flip, [event.id], mark_setting=True)
    event.refresh_from_db()
    assert event.deleted and event.actor == str(worker.id)
