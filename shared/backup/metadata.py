"""The archive's metadata: what was backed up, from which schema and configuration. It holds no
secrets: settings are represented by a hash of non-secret values, credentials not at all."""

from __future__ import annotations

import hashlib
import json
from importlib import metadata as package_metadata
from typing import Any

from django.conf import settings
from django.db.migrations.loader import MigrationLoader

from shared.backup.database import Snapshot
from shared.backup.profile import ServiceProfile


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def schema_version(snapshot: Snapshot) -> dict[str, Any]:
    """The applied migrations as the dump holds them: the schema a restore brings back."""
    rows = snapshot.query("SELECT app, name FROM django_migrations ORDER BY app, name")
    applied = [f"{app}.{name}" for app, name in rows]
    latest: dict[str, str] = {}
    for app, name in rows:
        latest[app] = max(latest.get(app, ""), name)
    return {"migrations": len(applied), "latest": latest, "sha256": _digest(applied)}


def settings_fingerprint(profile: ServiceProfile) -> dict[str, Any]:
    values = {name: getattr(settings, name, None) for name in profile.fingerprint_settings}
    return {"settings": list(profile.fingerprint_settings), "sha256": _digest(values)}


def key_id(key: str) -> str:
    """Names a key without revealing it: a truncated, domain-separated SHA-256 of a random key."""
    return hashlib.sha256(b"caseflow-backup-key-id:" + key.encode()).hexdigest()[:16]


def encryption_key_ids(profile: ServiceProfile) -> dict[str, list[str]]:
    found = {}
    for name in profile.key_settings:
        keys = getattr(settings, name, None) or []
        found[name] = [key_id(str(key)) for key in ([keys] if isinstance(keys, str) else keys)]
    return found


def key_report(*, profile: ServiceProfile, metadata: dict[str, Any]) -> str | None:
    """None when the service keeps no encrypted columns; else whether this configuration holds every
    key the backup was taken with (without them, restored encrypted values do not decrypt)."""
    recorded: dict[str, list[str]] = metadata.get("encryption_key_ids") or {}
    if not recorded:
        return None
    here = encryption_key_ids(profile)
    missing = [
        f"{name} key id {kid}"
        for name, ids in recorded.items()
        for kid in ids
        if kid not in here.get(name, [])
    ]
    if missing:
        return "Warning: this configuration lacks encryption keys the backup was taken with: " + ", ".join(
            missing
        )
    return f"Encryption keys: this configuration holds all {sum(map(len, recorded.values()))} the backup was taken with"


def code_version() -> str:
    try:
        return package_metadata.version("caseflow")
    except package_metadata.PackageNotFoundError:
        return "unknown"


def build_metadata(
    *, profile: ServiceProfile, backup_id: str, created_at: str, vendor: str, snapshot: Snapshot
) -> dict[str, Any]:
    return {
        "backup_id": backup_id,
        "service": profile.service,
        "created_at": created_at,
        "code_version": code_version(),
        "database": {
            "vendor": vendor,
            "server_version": snapshot.server_version,
            "dump_tool": snapshot.dump_tool,
        },
        "schema": schema_version(snapshot),
        "settings_fingerprint": settings_fingerprint(profile),
        "encryption_key_ids": encryption_key_ids(profile),
    }


def applied_here() -> set[str]:
    """Migrations this code knows, to tell whether an archive's schema is newer than the code."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    return {f"{app}.{name}" for app, name in loader.disk_migrations}
