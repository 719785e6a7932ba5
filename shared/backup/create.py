"""Taking a backup.

Consistency under write load: the dump, the list of blobs and the applied migrations come from one
database snapshot (see database.py). Blobs are written before their rows commit and are never
changed, so every blob the snapshot lists is in storage unless its last document was deleted
after the snapshot and the blob released. Then the archive would hold a row without its bytes, so
that attempt is dropped and the backup is taken again from a newer snapshot (a few times at most).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from tempfile import TemporaryDirectory

from django.db import connections

from shared.backup.archive import ArchiveWriter, archive_writer, file_sha256, read_manifest, seal_bytes
from shared.backup.database import DUMP_MEMBER, Database, Snapshot, dump_snapshot
from shared.backup.errors import BackupError, BlobVanished
from shared.backup.manifest import BLOB, DATABASE, MANIFEST, METADATA, METADATA_KIND, SEAL, Manifest, Member
from shared.backup.metadata import build_metadata
from shared.backup.profile import BlobSet, ServiceProfile
from shared.backup.progress import progress_bar

ATTEMPTS = 3
Say = Callable[[str], None]


@dataclass
class BackupRequest:
    output: Path
    compression: str = "gzip"
    incremental: bool = False
    show_progress: bool = True


def backup_create(*, profile: ServiceProfile, request: BackupRequest, say: Say = lambda _: None) -> Manifest:
    output = request.output
    if output.exists():
        raise BackupError(f"{output} already exists: a backup never overwrites a file")
    if not output.parent.is_dir():
        raise BackupError(f"folder {output.parent} does not exist")
    parent = find_parent(profile=profile, folder=output.parent) if request.incremental else None
    if parent is not None:
        say(f"Incremental: parent backup {parent[1].backup_id} ({parent[0].name})")
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return _attempt(profile=profile, request=request, parent=parent)
        except BlobVanished as exc:
            say(f"Attempt {attempt}: {exc}; taking the backup again from a newer snapshot")
    raise BackupError(
        f"blobs kept being deleted during {ATTEMPTS} attempts; try again when the service is quieter"
    )


def find_parent(*, profile: ServiceProfile, folder: Path) -> tuple[Path, Manifest]:
    """The newest backup of this service in the folder an incremental backup is written to."""
    found = [(manifest.created_at, path, manifest) for path, manifest in archives_in(folder)]
    found = [entry for entry in found if entry[2].service == profile.service]
    if not found:
        raise BackupError(
            f"--incremental needs an earlier {profile.service} backup in {folder}; there is none"
        )
    _, path, manifest = max(found, key=lambda entry: entry[0])
    return path, manifest


def archives_in(folder: Path) -> list[tuple[Path, Manifest]]:
    """Every readable backup archive in a folder; other files are skipped."""
    found = []
    for path in sorted(folder.iterdir()):
        if not path.is_file() or path.name.endswith(".partial"):
            continue
        try:
            found.append((path, read_manifest(path)))
        except BackupError:
            continue
    return found


def _attempt(
    *, profile: ServiceProfile, request: BackupRequest, parent: tuple[Path, Manifest] | None
) -> Manifest:
    database = Database.from_settings(connections[profile.database_alias].settings_dict)
    backup_id, created_at = str(uuid.uuid4()), datetime.now(UTC).isoformat()
    with TemporaryDirectory(prefix="backup-", dir=request.output.parent) as staging:
        dump = Path(staging) / "database"
        with dump_snapshot(database, dump) as snapshot:
            metadata = build_metadata(
                profile=profile,
                backup_id=backup_id,
                created_at=created_at,
                vendor=database.vendor,
                snapshot=snapshot,
            )
            blobs = _blob_list(profile.blobs, snapshot)
        held = {sha: size for sha, size in blobs.items() if parent is None or sha not in parent[1].blobs}
        manifest = Manifest(
            backup_id=backup_id,
            service=profile.service,
            created_at=created_at,
            compression=request.compression,
            database_vendor=database.vendor,
            members=[],
            blobs=blobs,
            parent={"id": parent[1].backup_id, "file": parent[0].name} if parent else None,
        )
        metadata_bytes = _json(metadata)
        manifest.members = [
            Member(METADATA, METADATA_KIND, len(metadata_bytes), _sha(metadata_bytes)),
            Member(DUMP_MEMBER[database.vendor], DATABASE, dump.stat().st_size, file_sha256(dump)),
            *_blob_members(profile.blobs, held),
        ]
        _write(request=request, manifest=manifest, metadata=metadata_bytes, dump=dump, blobs=profile.blobs)
    return manifest


def _blob_list(blobs: BlobSet | None, snapshot: Snapshot) -> dict[str, int]:
    if blobs is None:
        return {}
    rows = snapshot.query(f'SELECT "{blobs.hash_column}", "{blobs.size_column}" FROM "{blobs.table}"')
    return {str(sha): int(size) for sha, size in sorted(rows)}


def _blob_members(blobs: BlobSet | None, held: dict[str, int]) -> list[Member]:
    """Sizes come from storage itself; a blob missing there was deleted after the snapshot."""
    if blobs is None:
        return []
    storage, members = blobs.storage(), []
    for sha in sorted(held):
        key = blobs.key(sha)
        # exists() first: each storage backend signals a missing file its own way from size().
        if not storage.exists(key):
            raise BlobVanished(f"blob {sha} is no longer in storage")
        members.append(Member(key, BLOB, storage.size(key), sha))
    return members


def _write(
    *, request: BackupRequest, manifest: Manifest, metadata: bytes, dump: Path, blobs: BlobSet | None
) -> None:
    """Writes to a `.partial` file renamed at the end, so a failed backup leaves no archive."""
    partial = request.output.with_name(request.output.name + ".partial")
    total = sum(member.size for member in manifest.members)
    try:
        with (
            archive_writer(partial, request.compression) as writer,
            progress_bar(total=total, description="backup", enabled=request.show_progress) as bar,
        ):
            manifest_bytes = manifest.to_json()
            writer.add_bytes(MANIFEST, manifest_bytes)
            writer.add_bytes(METADATA, metadata)
            database = manifest.database
            with dump.open("rb") as source:
                writer.add_stream(
                    database.name, source, size=database.size, sha256=database.sha256, progress=bar
                )
            _write_blobs(writer, manifest, blobs, bar)
            writer.add_bytes(SEAL, seal_bytes(manifest_bytes))  # last: nothing else covers the manifest
        partial.rename(request.output)
    finally:
        partial.unlink(missing_ok=True)


def _write_blobs(writer: ArchiveWriter, manifest: Manifest, blobs: BlobSet | None, bar: object) -> None:
    if blobs is None:
        return
    storage = blobs.storage()
    for member in manifest.members:
        if member.kind != BLOB:
            continue
        if not storage.exists(member.name):
            raise BlobVanished(f"blob {member.sha256} is no longer in storage")
        with storage.open(member.name, "rb") as source:
            writer.add_stream(member.name, source, size=member.size, sha256=member.sha256, progress=bar)


def _json(value: object) -> bytes:
    return json.dumps(value, indent=2, sort_keys=True).encode()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
