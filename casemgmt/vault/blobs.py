"""The blob lifecycle: bytes stored once per SHA-256, removed when no document refers to them.

Safety under concurrent upload and delete of the same bytes: both sides first lock the blob's row
(inserting it if missing), and storage is only written or removed while that lock is held. An
upload creates its document before releasing the lock; a release removes the bytes only if, under
the lock, no document refers to them. So an upload never reuses bytes a release is about to remove,
and a release never removes bytes a committed document needs.
"""

from __future__ import annotations

from django.core.files import File

from casemgmt.tenancy import rls
from casemgmt.vault.models import Blob, Document, blob_key
from casemgmt.vault.storage import vault_storage
from casemgmt.vault.uploads import HashedUpload


def _blob_lock(*, sha256: str, size: int = 0) -> Blob:
    """The blob row, created if missing, locked until the transaction ends.

    Loops because the row can vanish between the insert and the lock: a release holding the lock
    deletes it and commits, and our `SELECT ... FOR UPDATE` then finds nothing; we insert it again.
    """
    while True:
        Blob.objects.bulk_create([Blob(sha256=sha256, size=size)], ignore_conflicts=True)
        blob = Blob.objects.select_for_update().filter(sha256=sha256).first()
        if blob is not None:
            return blob


def blob_store(*, upload: HashedUpload) -> Blob:
    """Must run inside the caller's transaction: the lock is held until its document is saved."""
    blob = _blob_lock(sha256=upload.sha256, size=upload.length)
    storage, key = vault_storage(), blob_key(upload.sha256)
    if storage.exists(key) and storage.size(key) == upload.length:
        return blob  # the same bytes are already stored: keep one copy
    if storage.exists(key):  # a copy cut short by a crash: replace it
        storage.delete(key)
    upload.temp.seek(0)
    stored = storage.save(key, File(upload.temp))
    if stored != key:  # never store content under a name other than its hash
        storage.delete(stored)
        raise RuntimeError(f"storage renamed blob {key} to {stored}")
    if blob.size != upload.length:
        Blob.objects.filter(sha256=blob.sha256).update(size=upload.length)
    return blob


def blob_release(*, sha256: str) -> bool:
    """Removes the bytes and the blob row when no document refers to them; True when removed.

    Bytes are shared across tenants, so the check must see every tenant's documents: it runs in the
    system context. In a tenant's context row-level security would hide another tenant's document
    with the same bytes, and its bytes would be removed."""
    with rls.system_transaction():
        blob = _blob_lock(sha256=sha256)
        if Document.objects.filter(blob=blob).exists():
            return False
        vault_storage().delete(blob_key(sha256))
        blob.delete()
        return True
