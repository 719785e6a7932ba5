"""Signed checkpoints of the orchestrator's audit chain: made by the recovery sweep (there is no
beat), checked by GET /api/audit/verify, listed with their public keys for an outside witness.
The orchestrator has no tenants: one chain, admin-only reads."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from orchestrator.audit.models import CHAIN, AuditCheckpoint, AuditEvent
from orchestrator.audit.services import record
from orchestrator.system.services import recovery_sweep
from shared.audit.hashing import compute_hash, entry_of
from shared.audit.signing import new_key_entry
from tests.orchestrator.security.helpers import api_key_headers, bearer

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(settings):
    settings.ORCH_SECURITY_ENABLED = True
    settings.AUDIT_CHECKPOINT_EVERY_EVENTS = 4
    settings.AUDIT_CHECKPOINT_INTERVAL_SECONDS = 3600
    settings.AUDIT_WITNESS_URL = ""
    settings.AUDIT_WITNESS_FILE = ""
    return api_key_headers("admin", name="ops-admin")


def append(count):
    for n in range(count):
        record(actor="system", action="test.appended", resource=f"things/{n}")


def sweep_to_checkpoint():
    head = AuditEvent.objects.filter(chain=CHAIN).order_by("-sequence").first()
    last = AuditCheckpoint.objects.order_by("-sequence").first()
    append(max(4 - ((head.sequence if head else 0) - (last.sequence if last else 0)), 0))
    assert recovery_sweep(sweeper="test", force=True)["audit_checkpoints"] == 1
    return AuditCheckpoint.objects.order_by("-sequence").first()


def rewrite_history(sequence):
    """An attacker with database write access: change an old event, recompute every later hash."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        events = list(AuditEvent.objects.filter(chain=CHAIN, sequence__gte=sequence).order_by("sequence"))
        previous = events[0].previous_hash
        for event in events:
            if event.sequence == sequence:
                event.actor = "mallory"
            event.previous_hash, event.hash = previous, compute_hash(previous, entry_of(event))
            cursor.execute(
                "UPDATE orch_audit_auditevent SET actor = %s, previous_hash = %s, hash = %s WHERE id = %s",
                [event.actor, event.previous_hash, event.hash, event.id],
            )
            previous = event.hash
        cursor.execute("SET LOCAL session_replication_role = origin")


def test_the_recovery_sweep_signs_the_head_when_due(api, admin):
    first = sweep_to_checkpoint()
    head = AuditEvent.objects.order_by("-sequence").first()
    assert (first.sequence, first.head_hash, first.key_id) == (head.sequence, head.hash, "test")
    assert recovery_sweep(sweeper="test", force=True)["audit_checkpoints"] == 0  # nothing new


def test_rewritten_history_fails_verification_at_the_checkpoint(api, admin):
    first = sweep_to_checkpoint()
    second = sweep_to_checkpoint()
    rewrite_history(first.sequence + 1)
    for query in ({}, {"from": "checkpoint"}):
        body = api.get("/api/audit/verify", query, **admin).json()
        assert body["status"] == "invalid"
        assert body["checkpoints"]["first_invalid"]["sequence"] == second.sequence
        assert body["checkpoints"]["valid"] is False and body["errors"][0].startswith(
            f"checkpoint at sequence {second.sequence}"
        )


def test_rotation_and_verification_from_the_last_checkpoint(api, admin, settings):
    old, new = new_key_entry("orch-a"), new_key_entry("orch-b")
    settings.AUDIT_SIGNING_KEYS = [old]
    sweep_to_checkpoint()
    settings.AUDIT_SIGNING_KEYS = [new, old]
    last = sweep_to_checkpoint()
    append(2)
    body = api.get("/api/audit/verify", {"from": "checkpoint"}, **admin).json()
    assert body["status"] == "valid" and body["entries_checked"] == 2
    assert body["checkpoints"] == {
        "mode": "checkpoint", "checked": 2, "valid": True, "verified_from": last.sequence, "first_invalid": None
    }  # fmt: skip
    keys = api.get("/api/audit/checkpoints/keys", **admin).json()["keys"]
    assert [(k["keyId"], k["signing"]) for k in keys] == [("orch-b", True), ("orch-a", False)]
    assert old.split(":")[1] not in json.dumps(keys)
    assert api.get("/api/audit/verify", {"from": "elsewhere"}, **admin).status_code == 400


def test_the_list_pages_newest_first(api, admin):
    first = sweep_to_checkpoint()
    second = sweep_to_checkpoint()
    body = api.get("/api/audit/checkpoints", {"limit": 1}, **admin).json()
    assert (body["total"], body["limit"], body["offset"]) == (2, 1, 0)
    assert body["checkpoints"][0]["sequence"] == second.sequence
    assert body["checkpoints"][0]["log"] == "orchestrator" and body["checkpoints"][0]["chain"] == CHAIN
    older = api.get("/api/audit/checkpoints", {"offset": 1}, **admin).json()["checkpoints"]
    assert [c["sequence"] for c in older] == [first.sequence]


def test_the_file_witness_gets_one_line_per_checkpoint(api, admin, settings, tmp_path):
    settings.AUDIT_WITNESS_FILE = str(tmp_path / "orch-witness.jsonl")
    first = sweep_to_checkpoint()
    second = sweep_to_checkpoint()
    lines = [json.loads(line) for line in (tmp_path / "orch-witness.jsonl").read_text().splitlines()]
    assert [line["sequence"] for line in lines] == [first.sequence, second.sequence]
    listed = api.get("/api/audit/checkpoints", **admin).json()["checkpoints"]
    assert lines == listed[::-1]


@pytest.mark.parametrize("path", ["/api/audit/checkpoints", "/api/audit/checkpoints/keys"])
def test_only_admins_may_read_checkpoints(api, settings, path):
    settings.ORCH_SECURITY_ENABLED = True
    assert api.get(path).status_code == 401
    assert api.get(path, **api_key_headers("viewer")).status_code == 403
    assert api.get(path, **bearer("operator")).status_code == 403
    assert api.get(path, **api_key_headers("admin")).status_code == 200
