"""What the orchestrator's backups hold: its database (it keeps no files outside it)."""

from __future__ import annotations

from shared.backup.profile import ServiceProfile

# Non-secret settings whose change between backup and restore is worth noticing.
FINGERPRINT_SETTINGS = (
    "INSTALLED_APPS",
    "DEFAULT_AUTO_FIELD",
    "TIME_ZONE",
    "USE_TZ",
    "ORCH_SECURITY_ENABLED",
)


def orchestrator_backup_profile() -> ServiceProfile:
    return ServiceProfile(
        service="orchestrator",
        fingerprint_settings=FINGERPRINT_SETTINGS,
        key_settings=("FIELD_ENCRYPTION_KEYS",),  # webhook secrets are stored encrypted with them
        restore_url_variable="ORCH_RESTORE_DATABASE_URL",
    )
