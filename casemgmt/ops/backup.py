"""What the case service's backups hold: its database and the document vault's blobs, listed by the
vault's blob table (one row per stored file, keyed by SHA-256)."""

from __future__ import annotations

from casemgmt.vault.models import Blob, blob_key
from casemgmt.vault.storage import vault_storage
from shared.backup.profile import BlobSet, ServiceProfile

# Non-secret settings whose change between backup and restore is worth noticing.
FINGERPRINT_SETTINGS = (
    "INSTALLED_APPS",
    "AUTH_USER_MODEL",
    "DEFAULT_AUTO_FIELD",
    "TIME_ZONE",
    "USE_TZ",
    "LANGUAGE_CODE",
    "VAULT_STORAGE",
    "VAULT_MAX_UPLOAD_BYTES",
    "CASE_DEFAULT_SLA_HOURS",
)


def case_backup_profile() -> ServiceProfile:
    return ServiceProfile(
        service="casemgmt",
        fingerprint_settings=FINGERPRINT_SETTINGS,
        blobs=BlobSet(table=Blob._meta.db_table, storage=vault_storage, key=blob_key),
    )
