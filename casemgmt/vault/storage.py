"""The vault's storage backend (filesystem or S3-compatible, chosen by settings) and what differs
between them: only an S3-compatible store can hand out its own presigned download URLs."""

from __future__ import annotations

from django.conf import settings
from django.core.files.storage import Storage, storages
from django.utils.http import content_disposition_header


def vault_storage() -> Storage:
    return storages["vault"]


def presigned_url(*, key: str, filename: str, mime_type: str) -> str | None:
    """A short-lived URL of the store itself that serves the bytes with our filename and type, or
    None when the store has none (the filesystem: the service streams the bytes itself)."""
    storage = vault_storage()
    if not hasattr(storage, "bucket_name"):
        return None
    parameters = {
        "ResponseContentType": mime_type,
        "ResponseContentDisposition": content_disposition_header(True, filename),
    }
    return storage.url(key, parameters=parameters, expire=settings.VAULT_SIGNED_URL_SECONDS)  # type: ignore[call-arg]
