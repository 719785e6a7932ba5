"""Concurrent upload and delete of the same bytes, with real threads on PostgreSQL: whatever the
interleaving, every document left has its bytes in storage, and bytes no document needs are gone."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from casemgmt.vault.models import Blob, Document, blob_key
from casemgmt.vault.services import document_delete, document_upload
from casemgmt.vault.storage import vault_storage
from casemgmt.vault.uploads import HashedUpload

CONTENT = b"the same bytes, raced" * 512
SHA = hashlib.sha256(CONTENT).hexdigest()

pytestmark = pytest.mark.django_db(transaction=True)


def in_threads(*work: Callable[[], Any]) -> list[Any]:
    """Runs each callable in its own thread (own database connection), started together."""
    barrier = threading.Barrier(len(work))
    results: list[Any] = [None] * len(work)

    def run(index: int, fn: Callable[[], Any]) -> None:
        try:
            barrier.wait()
            results[index] = fn()
        except BaseException as exc:  # noqa: BLE001 - reported to the test below
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate(work)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


def upload_as(user) -> Document:
    return document_upload(user=user, upload=HashedUpload.from_bytes(CONTENT, name="raced.bin"))


def stored_bytes() -> bytes | None:
    storage = vault_storage()
    if not storage.exists(blob_key(SHA)):
        return None
    with storage.open(blob_key(SHA), "rb") as handle:
        return handle.read()


def test_upload_racing_the_delete_of_the_last_reference_loses_nothing(owner):
    for _ in range(15):
        existing = upload_as(owner)
        fresh, _ = in_threads(
            lambda: upload_as(owner), lambda e=existing: document_delete(user=owner, document=e)
        )
        assert list(Document.objects.values_list("id", flat=True)) == [fresh.id]
        assert stored_bytes() == CONTENT, "a live document lost its bytes"
        document_delete(user=owner, document=fresh)
        assert stored_bytes() is None and not Blob.objects.exists()


def test_many_writers_leave_storage_exactly_matching_the_documents(owner):
    def churn() -> list[Document]:
        kept = []
        for round_ in range(8):
            document = upload_as(owner)
            if round_ % 2:
                kept.append(document)
            else:
                document_delete(user=owner, document=document)
        return kept

    kept = [d for batch in in_threads(churn, churn, churn, churn) for d in batch]
    assert Document.objects.count() == len(kept) == 16
    assert stored_bytes() == CONTENT
    assert Blob.objects.filter(sha256=SHA).count() == 1
    for document in kept:
        document_delete(user=owner, document=document)
    assert stored_bytes() is None and not Blob.objects.exists()
