"""A backup taken while the service writes (cases created, documents uploaded and deleted in another
thread) restores to one consistent moment: every case has its audit event, every tenant's audit
chain verifies, and every blob the restored database refers to is restored with its bytes."""

from __future__ import annotations

import hashlib
import io
import threading
from collections import defaultdict
from dataclasses import replace

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection
from psycopg.rows import dict_row

from casemgmt.audit.models import AuditEvent
from casemgmt.cases.models import Case
from casemgmt.cases.services import case_create
from casemgmt.ops.backup import case_backup_profile
from casemgmt.vault.models import Blob, Document, blob_key
from casemgmt.vault.services import document_delete, document_upload
from casemgmt.vault.storage import vault_storage
from casemgmt.vault.uploads import HashedUpload
from shared.audit.services import audit_verify
from shared.backup.create import BackupRequest, backup_create
from shared.backup.verify import archive_verify
from tests.casemgmt.cases.conftest import VALID_DATA
from tests.support.backups import empty_database
from tests.support.processes import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("vault_root")]


class Writer(threading.Thread):
    """Creates a case with a document, over and over; deletes every third document (its blob is
    released), until stopped."""

    def __init__(self, user, case_type) -> None:
        super().__init__(daemon=True)
        self.user, self.case_type = user, case_type
        self.stop, self.done, self.errors = threading.Event(), 0, []

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                case = case_create(user=self.user, case_type=self.case_type, data=dict(VALID_DATA))
                content = f"document {self.done} of case {case.id}".encode()
                document = document_upload(
                    user=self.user, upload=HashedUpload.from_bytes(content, name="a.txt"), case=case
                )
                if self.done % 3 == 2:
                    document_delete(user=self.user, document=document)
                self.done += 1
        except Exception as exc:  # noqa: BLE001 - reported by the test
            self.errors.append(exc)
        finally:
            connection.close()


def rows(url: str, sql: str) -> list[dict]:
    with psycopg.connect(url.replace("postgres://", "postgresql://", 1), row_factory=dict_row) as db:
        return db.execute(sql).fetchall()


def test_backup_under_concurrent_writes_restores_consistent(admin_user, case_type, tmp_path):
    writer = Writer(admin_user, case_type)
    writer.start()
    try:
        wait_for(lambda: writer.done >= 6 or writer.errors, timeout=60, what="the writer to get going")
        before = Case.objects.count()
        out = io.StringIO()
        call_command("backup", "--output", str(tmp_path / "busy.tar.gz"), "--no-progress", stdout=out)
        during = writer.done
        wait_for(
            lambda: writer.done >= during + 3 or writer.errors, timeout=60, what="writes after the backup"
        )
    finally:
        writer.stop.set()
        writer.join(timeout=60)
    assert not writer.errors, writer.errors
    after = Case.objects.count()

    target = tmp_path / "restored"
    with empty_database(connection.settings_dict) as url:
        call_command(
            "restore", "--input", str(tmp_path / "busy.tar.gz"), "--target", str(target), "--database-url", url,
            "--no-progress", stdout=io.StringIO(),
        )  # fmt: skip
        cases = rows(url, f'SELECT id FROM "{Case._meta.db_table}"')
        events = rows(url, f'SELECT * FROM "{AuditEvent._meta.db_table}" ORDER BY chain, sequence')
        documents = rows(url, f'SELECT blob_id FROM "{Document._meta.db_table}"')
        blobs = rows(url, f'SELECT sha256 FROM "{Blob._meta.db_table}"')

    assert before <= len(cases) <= after  # a moment between the backup's start and its end
    created = {event["resource"] for event in events if event["action"] == "case:created"}
    assert {f"cases/{case['id']}" for case in cases} == created
    chains = defaultdict(list)
    for event in events:
        chains[event["chain"]].append(AuditEvent(**event))
    for chain, chain_events in chains.items():
        result = audit_verify(chain_events)
        assert result.is_valid, (chain, result.errors)
    uploaded = sum(1 for event in events if event["action"] == "document:uploaded")
    deleted = sum(1 for event in events if event["action"] == "document:deleted")
    assert len(documents) == uploaded - deleted > 0
    assert {doc["blob_id"] for doc in documents} <= {blob["sha256"] for blob in blobs}
    for blob in blobs:
        stored = target / blob_key(blob["sha256"])
        assert hashlib.sha256(stored.read_bytes()).hexdigest() == blob["sha256"]


def test_a_blob_deleted_between_snapshot_and_copy_makes_the_backup_start_again(
    admin_user, case_type, tmp_path
):
    case = case_create(user=admin_user, case_type=case_type, data=dict(VALID_DATA))
    kept, doomed = (
        document_upload(user=admin_user, upload=HashedUpload.from_bytes(body, name="a.txt"), case=case)
        for body in (b"kept bytes", b"doomed bytes")
    )
    calls = []

    def storage_after_a_deletion():
        """The vault's storage, reached once the snapshot is taken: the first time, another request
        has just deleted a document and released its blob."""
        calls.append(1)
        if len(calls) == 1:
            document_delete(user=admin_user, document=doomed)
        return vault_storage()

    profile = case_backup_profile()
    profile = replace(profile, blobs=replace(profile.blobs, storage=storage_after_a_deletion))
    said: list[str] = []
    request = BackupRequest(output=tmp_path / "b.tar.gz", show_progress=False)
    manifest = backup_create(profile=profile, request=request, say=said.append)
    assert any("taking the backup again" in line for line in said), said
    assert set(manifest.blobs) == {kept.blob_id}
    assert archive_verify(request.output, show_progress=False).backup_id == manifest.backup_id
