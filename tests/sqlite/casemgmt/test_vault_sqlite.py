"""The document vault and erasure on SQLite, as `make run` has them: no row locks there, so blob
safety under concurrent upload and delete rests on SQLite admitting one writer at a time (each
transaction that stores or releases bytes writes the blob row first)."""

from __future__ import annotations

import hashlib

import pytest

from casemgmt.audit.services import verify_tenant_chain
from casemgmt.vault.erasure import erasure_run
from casemgmt.vault.models import Blob, Document, blob_key
from casemgmt.vault.services import document_delete, document_upload
from casemgmt.vault.storage import vault_storage
from casemgmt.vault.uploads import HashedUpload
from tests.sqlite.threads import race

CONTENT = b"sqlite bytes " * 300
SHA = hashlib.sha256(CONTENT).hexdigest()


@pytest.fixture(autouse=True)
def vault_in_tmp(settings, tmp_path):
    """Each test stores its blobs in its own folder."""
    location = {"location": str(tmp_path / "vault")}
    backend = {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": location}
    settings.STORAGES = {**settings.STORAGES, "vault": backend}


def test_upload_download_delete_round_trip(api, upload, owner, django_capture_on_commit_callbacks):
    created = upload(owner, CONTENT, name="notes.txt").json()
    served = api(owner).get(f"/vault/download/{created['id']}")
    assert b"".join(served.streaming_content) == CONTENT
    with django_capture_on_commit_callbacks(execute=True):
        assert api(owner).delete(f"/vault/{created['id']}").status_code == 204
    assert not Blob.objects.exists() and not vault_storage().exists(blob_key(SHA))


@pytest.mark.django_db(transaction=True)
def test_concurrent_upload_and_delete_of_the_same_bytes_lose_nothing(owner):
    def add() -> Document:
        return document_upload(user=owner, upload=HashedUpload.from_bytes(CONTENT, name="raced.bin"))

    for _ in range(8):
        existing = add()
        fresh, _ = race([add, lambda e=existing: document_delete(user=owner, document=e)])
        assert list(Document.objects.values_list("id", flat=True)) == [fresh.id]
        with vault_storage().open(blob_key(SHA), "rb") as handle:
            assert handle.read() == CONTENT
        document_delete(user=owner, document=fresh)
        assert not vault_storage().exists(blob_key(SHA))


def test_erasure_runs_and_the_chain_verifies(
    api, admin_user, tenant, make_user, upload, django_capture_on_commit_callbacks
):
    subject = make_user(
        tenant, permissions=["vault:upload"], email="lee.lite@example.test", display_name="Lee Lite"
    )
    upload(subject, b"lee's file", name="lee.txt")
    accepted = api(admin_user).post(
        "/admin/erasure", {"userId": str(subject.id), "reason": "r"}, format="json"
    )
    with django_capture_on_commit_callbacks(execute=True):
        erasure_run(erasure_id=accepted.json()["id"])
    status = api(admin_user).get(f"/admin/erasure/{accepted.json()['id']}").json()
    assert status["status"] == "completed" and status["report"]["counts"]["documentsDeleted"] == 1
    result = verify_tenant_chain(tenant_id=tenant.id)
    assert result.is_valid and result.redacted_entries > 0
