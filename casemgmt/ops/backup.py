"""What the case service's backups hold: its database and the document vault's blobs, listed by the
vault's blob table (one row per stored file, keyed by SHA-256); which keys its encrypted columns
need; and what a restore puts back that the dump leaves out (grants to the tenant and report roles,
row-level security set-up)."""

from __future__ import annotations

from django.db.backends.base.base import BaseDatabaseWrapper

from casemgmt.reports import grants as report_grants
from casemgmt.tenancy import rls
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
        # Connector configurations and inbound webhook secrets are stored encrypted with them.
        key_settings=("FIELD_ENCRYPTION_KEYS",),
        blobs=BlobSet(table=Blob._meta.db_table, storage=vault_storage, key=blob_key),
        restore_url_variable="CASE_RESTORE_DATABASE_URL",
        after_load=after_load,
    )


def after_load(conn: BaseDatabaseWrapper) -> list[str]:
    """The set-up every `migrate` runs (row-level security, the tenant role's grants) and the
    report role's grants: without them every authenticated request fails on the restored database
    and report runs answer 503. Says what an administrator must still do when the loading user
    may not create or grant a role."""
    rls.install(conn)
    report_grants.install_grants(conn)
    warnings = []
    with conn.cursor() as cursor:
        if rls.role_name() and not rls.role_ready(cursor):
            warnings.append(
                f"Warning: the tenant role {rls.role_name()} is missing or not granted to this user:"
                " authenticated requests answer 503 until an administrator creates and grants it"
                " (docs/configuration.md, CASE_TENANT_DB_ROLE)"
            )
    if not report_grants.grants_ready(conn):
        warnings.append(
            "Warning: the report role is missing: report runs answer 503 until an administrator"
            " creates it (docs/reports.md)"
        )
    return warnings
