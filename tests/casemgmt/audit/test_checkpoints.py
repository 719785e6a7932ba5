"""Signed audit checkpoints: the beat job signs each tenant chain's head; verification checks the
chain against them, so history rewritten in the database (every later hash recomputed) is caught."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from casemgmt.audit.checkpoints import audit_checkpoint_tenant
from casemgmt.audit.models import AuditCheckpoint, AuditEvent
from casemgmt.audit.services import record, verify_tenant_chain
from casemgmt.audit.tasks import checkpoints_sweep
from casemgmt.tenancy import rls
from shared.audit.hashing import compute_hash, entry_of
from shared.audit.signing import claim_message, new_key_entry, parse_keys
from tests.casemgmt.conftest import admin_client
from tests.support.protocols import ProtocolServer, Recorded, Reply

pytestmark = pytest.mark.django_db

OLD_KEY = new_key_entry("k2026a")
NEW_KEY = new_key_entry("k2026b")


@pytest.fixture
def every_five(settings):
    settings.AUDIT_CHECKPOINT_EVERY_EVENTS = 5
    settings.AUDIT_CHECKPOINT_INTERVAL_SECONDS = 3600
    settings.AUDIT_WITNESS_FILE = ""
    settings.AUDIT_WITNESS_URL = ""
    return settings


@pytest.fixture
def auditor(tenant, make_user):
    return make_user(tenant, permissions=["admin:audit"])


def append(tenant, count):
    for n in range(count):
        record(tenant_id=tenant.id, actor="robot", action="test:appended", resource=f"things/{n}")


def fill_to_checkpoint(tenant, every=5):
    """Appends until a checkpoint is due, runs the beat job, returns the new checkpoint."""
    head = AuditEvent.objects.filter(tenant=tenant).order_by("-sequence").first()
    last = AuditCheckpoint.objects.filter(tenant=tenant).order_by("-sequence").first()
    append(tenant, max(every - ((head.sequence if head else 0) - (last.sequence if last else 0)), 0))
    checkpoints_sweep()
    return AuditCheckpoint.objects.filter(tenant=tenant).order_by("-sequence").first()


def rewrite_history(tenant, sequence, resource):
    """What an attacker with write access to the database does: change an old event, then recompute
    the hash of it and of every later event with the chain's own algorithm, so every link holds."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")  # past the append-only trigger
        events = list(AuditEvent.objects.filter(tenant=tenant, sequence__gte=sequence).order_by("sequence"))
        previous = events[0].previous_hash
        for event in events:
            if event.sequence == sequence:
                event.resource = resource
            event.previous_hash = previous
            event.hash = compute_hash(previous, entry_of(event))
            cursor.execute(
                "UPDATE audit_auditevent SET resource = %s, previous_hash = %s, hash = %s WHERE id = %s",
                [event.resource, event.previous_hash, event.hash, event.id],
            )
            previous = event.hash
        cursor.execute("SET LOCAL session_replication_role = origin")


def test_the_beat_job_signs_the_head_once_enough_events_are_past_the_last_checkpoint(every_five, tenant):
    head = AuditEvent.objects.filter(tenant=tenant).order_by("-sequence").first().sequence
    every_five.AUDIT_CHECKPOINT_EVERY_EVENTS = head + 3
    assert checkpoints_sweep() == 0 and not AuditCheckpoint.objects.filter(tenant=tenant).exists()
    append(tenant, 3)
    assert checkpoints_sweep() == 1
    checkpoint = AuditCheckpoint.objects.get(tenant=tenant)
    head_event = AuditEvent.objects.filter(tenant=tenant).order_by("-sequence").first()
    assert (checkpoint.sequence, checkpoint.head_hash) == (head_event.sequence, head_event.hash)
    assert checkpoint.key_id == "test" and checkpoint.chain == str(tenant.id)
    assert checkpoints_sweep() == 0  # nothing new: idempotent
    append(tenant, 1)
    assert checkpoints_sweep() == 0  # one event, not old enough yet
    every_five.AUDIT_CHECKPOINT_INTERVAL_SECONDS = 0
    assert checkpoints_sweep() == 1
    assert AuditCheckpoint.objects.filter(tenant=tenant).order_by("-sequence").first().sequence == head + 4


def test_rewritten_history_fails_verification_at_the_checkpoint(every_five, api, auditor, tenant):
    first = fill_to_checkpoint(tenant)
    second = fill_to_checkpoint(tenant)
    append(tenant, 2)
    target = first.sequence + 2  # between the two checkpoints
    rewrite_history(tenant, target, "cases/forged")
    assert verify_tenant_chain(tenant_id=tenant.id).is_valid  # the bare hash chain is fooled
    for query in ("", "?from=checkpoint"):
        body = api(auditor).get(f"/audit/verify-chain{query}").json()
        assert body["status"] == "invalid", query
        report = body["checkpoints"]
        assert report["valid"] is False and report["checked"] == 2
        assert report["first_invalid"]["sequence"] == second.sequence
        assert (
            report["first_invalid"]["reason"]
            == "the chain's hash at its position is not the signed head hash"
        )
        assert body["first_invalid_entry"]["sequence"] == second.sequence
        assert body["errors"][0].startswith(f"checkpoint at sequence {second.sequence} (test)")


def test_a_forged_checkpoint_does_not_verify(every_five, api, auditor, tenant):
    checkpoint = fill_to_checkpoint(tenant)
    rewrite_history(tenant, checkpoint.sequence - 1, "cases/forged")
    forged = AuditEvent.objects.get(tenant=tenant, sequence=checkpoint.sequence).hash
    AuditCheckpoint.objects.filter(pk=checkpoint.pk).update(head_hash=forged)  # no key to sign it with
    body = api(auditor).get("/audit/verify-chain").json()
    assert body["status"] == "invalid"
    assert body["checkpoints"]["first_invalid"]["reason"] == "its signature does not verify"


def test_verification_from_the_last_checkpoint_walks_only_the_newer_events(every_five, api, auditor, tenant):
    fill_to_checkpoint(tenant)
    last = fill_to_checkpoint(tenant)
    append(tenant, 3)
    full = api(auditor).get("/audit/verify-chain").json()
    assert full["status"] == "valid" and full["checkpoints"]["mode"] == "full"
    assert full["checkpoints"] == {
        "mode": "full", "checked": 2, "valid": True, "verified_from": 0, "first_invalid": None
    }  # fmt: skip
    head = AuditEvent.objects.filter(tenant=tenant).order_by("-sequence").first()  # the walk's last
    quick = api(auditor).get("/audit/verify-chain?from=checkpoint").json()
    assert quick["status"] == "valid" and quick["checkpoints"]["verified_from"] == last.sequence
    assert quick["entries_checked"] == head.sequence - last.sequence
    assert quick["first_entry"]["sequence"] == last.sequence + 1
    assert api(auditor).get("/audit/verify-chain?from=somewhere").status_code == 400
    # a change after the last checkpoint is still found by the walk
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute("UPDATE audit_auditevent SET actor = 'mallory' WHERE id = %s", [head.id])
        cursor.execute("SET LOCAL session_replication_role = origin")
    broken = api(auditor).get("/audit/verify-chain?from=checkpoint").json()
    assert broken["status"] == "invalid" and broken["first_invalid_entry"]["id"] == str(head.id)


def test_after_key_rotation_old_checkpoints_still_verify(every_five, api, auditor, tenant):
    every_five.AUDIT_SIGNING_KEYS = [OLD_KEY]
    old = fill_to_checkpoint(tenant)
    every_five.AUDIT_SIGNING_KEYS = [NEW_KEY, OLD_KEY]  # the new key signs, the old one still verifies
    new = fill_to_checkpoint(tenant)
    assert (old.key_id, new.key_id) == ("k2026a", "k2026b")
    body = api(auditor).get("/audit/verify-chain").json()
    assert body["status"] == "valid" and body["checkpoints"]["checked"] == 2
    keys = api(auditor).get("/audit/checkpoints/keys").json()["keys"]
    assert [(k["keyId"], k["signing"], k["algorithm"]) for k in keys] == [
        ("k2026b", True, "Ed25519"),
        ("k2026a", False, "Ed25519"),
    ]
    assert OLD_KEY.split(":")[1] not in json.dumps(keys)  # public halves only
    every_five.AUDIT_SIGNING_KEYS = [NEW_KEY]  # the old key dropped too early
    dropped = api(auditor).get("/audit/verify-chain").json()
    assert dropped["status"] == "invalid"
    assert dropped["checkpoints"]["first_invalid"] == {
        "sequence": old.sequence,
        "created_at": dropped["checkpoints"]["first_invalid"]["created_at"],
        "key_id": "k2026a",
        "reason": "signed with key 'k2026a', which is not configured",
    }


def test_the_list_carries_what_an_outside_witness_needs_to_verify(every_five, api, auditor, tenant):
    first = fill_to_checkpoint(tenant)
    second = fill_to_checkpoint(tenant)
    body = api(auditor).get("/audit/checkpoints?limit=1").json()
    assert body["total"] == 2 and "offset=1" in body["next"]
    [item] = body["data"]
    assert item["sequence"] == second.sequence and item["headHash"] == second.head_hash
    assert api(auditor).get("/audit/checkpoints?offset=1").json()["data"][0]["sequence"] == first.sequence
    [key] = api(auditor).get("/audit/checkpoints/keys").json()["keys"]
    # the witness's own check: the public key, the published fields and nothing else
    from base64 import b64decode

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    claim = {name: value for name, value in item.items() if name != "signature"}
    public = Ed25519PublicKey.from_public_bytes(b64decode(key["publicKey"]))
    public.verify(b64decode(item["signature"]), claim_message(claim))  # raises when it does not hold
    assert claim["log"] == "casemgmt" and claim["chain"] == str(tenant.id)


@pytest.mark.parametrize("url", ["/audit/checkpoints", "/audit/checkpoints/keys"])
def test_checkpoint_endpoints_permissions_and_tenancy(
    every_five, api, make_user, auditor, tenant, other_tenant, url
):
    fill_to_checkpoint(tenant)
    fill_to_checkpoint(other_tenant)
    assert api(auditor).get(url).status_code == 200
    assert api(make_user(tenant, permissions=["audit:read", "cases:read"])).get(url).status_code == 403
    assert api(None).get(url).status_code == 401
    if url == "/audit/checkpoints":  # another tenant's admin sees only its own chain's checkpoints
        mine = {c["chain"] for c in api(auditor).get(url).json()["data"]}
        theirs = {
            c["chain"]
            for c in api(make_user(other_tenant, permissions=["admin:audit"])).get(url).json()["data"]
        }
        assert mine == {str(tenant.id)} and theirs == {str(other_tenant.id)}


class Witness(ProtocolServer):
    def handle(self, request: Recorded) -> Reply:
        return Reply(204)


def test_witnesses_get_each_checkpoint_and_a_refused_one_is_offered_again(every_five, tenant, tmp_path):
    witness = Witness().start()
    try:
        every_five.AUDIT_WITNESS_FILE = str(tmp_path / "witness.jsonl")
        every_five.AUDIT_WITNESS_URL = f"{witness.base_url}/checkpoints"
        every_five.CONNECTOR_ALLOWED_HOSTS = ["127.0.0.1"]
        first = fill_to_checkpoint(tenant)
        lines = [json.loads(line) for line in (tmp_path / "witness.jsonl").read_text().splitlines()]
        assert [(line["chain"], line["sequence"]) for line in lines] == [(str(tenant.id), first.sequence)]
        assert [r.json for r in witness.requests] == lines
        witness.fail_next(503)
        second = fill_to_checkpoint(tenant)
        second.refresh_from_db()
        assert second.witnessed_at is None  # refused: stays pending
        assert checkpoints_sweep() == 0  # nothing due, but the pending one is offered again
        second.refresh_from_db()
        assert second.witnessed_at is not None
        assert [r.json["sequence"] for r in witness.requests] == [
            first.sequence,
            second.sequence,
            second.sequence,
        ]
    finally:
        witness.stop()


def test_the_witness_url_goes_through_the_outbound_address_guard(every_five, tenant):
    every_five.AUDIT_WITNESS_URL = "http://127.0.0.1:9/checkpoints"  # loopback, not allow-listed
    every_five.CONNECTOR_ALLOWED_HOSTS = []
    checkpoint = fill_to_checkpoint(tenant)
    checkpoint.refresh_from_db()
    assert checkpoint.witnessed_at is None


def test_the_admin_verification_reports_the_checkpoints(every_five, admin_user, tenant):
    checkpoint = fill_to_checkpoint(tenant)
    client = admin_client(admin_user)
    ok = client.post("/admin/audit/auditevent/verify/", follow=True)
    [(level, text)] = [(m.level_tag, str(m)) for m in ok.context["messages"]]
    assert level == "success" and "1 signed checkpoint checked" in text
    rewrite_history(tenant, checkpoint.sequence - 1, "cases/forged")
    bad = client.post("/admin/audit/auditevent/verify/", follow=True)
    [(level, text)] = [(m.level_tag, str(m)) for m in bad.context["messages"]]
    assert level == "error" and f"checkpoint at sequence {checkpoint.sequence}" in text


@pytest.mark.django_db(transaction=True)
def test_two_checkpoint_jobs_at_once_make_one_checkpoint(every_five, tenant):
    append(tenant, 5)
    barrier = threading.Barrier(2)

    def job():
        try:
            barrier.wait(timeout=30)
            with rls.tenant_session(tenant.id):
                return audit_checkpoint_tenant(tenant_id=tenant.id)
        finally:
            connection.close()

    for _ in range(5):  # several rounds: each round two jobs race for one due checkpoint
        with ThreadPoolExecutor(max_workers=2) as pool:
            made = [m for m in pool.map(lambda _: job(), range(2)) if m is not None]
        assert len(made) == 1
        append(tenant, 5)
    rows = list(AuditCheckpoint.objects.filter(tenant=tenant).values_list("sequence", flat=True))
    assert len(rows) == 5 == len(set(rows))


def test_a_malformed_key_is_refused_without_showing_it():
    secret = "c2VjcmV0LXNlZWQ="  # not 32 bytes
    with pytest.raises(ValueError, match="'bad'") as refused:
        parse_keys([f"bad:{secret}"])
    assert secret not in str(refused.value) and "'bad'" in str(refused.value)
    assert "AAAA" not in repr(parse_keys([OLD_KEY]))
    assert OLD_KEY.split(":")[1] not in repr(parse_keys([OLD_KEY]))
