"""The manifest: the archive's first member, naming every other member with its size and SHA-256.

It comes first so that reading it (to plan a restore, to find an incremental backup's parent)
decompresses only the start of the archive. Every checksum is known before the members are
written: the database dump and the metadata are staged to files first, and a blob's checksum is
its name (the bytes are hashed again while they are copied, and a mismatch fails the backup).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from shared.backup.errors import BackupError

FORMAT = "caseflow-backup"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
METADATA = "metadata.json"
DATABASE, BLOB, METADATA_KIND = "database", "blob", "metadata"


@dataclass(frozen=True)
class Member:
    name: str
    kind: str  # database, metadata or blob
    size: int
    sha256: str


@dataclass
class Manifest:
    backup_id: str
    service: str
    created_at: str
    compression: str
    database_vendor: str  # postgresql or sqlite
    members: list[Member]
    # Every blob the dumped database refers to (digest -> size), whether this archive holds it or,
    # for an incremental backup, one of its ancestors does.
    blobs: dict[str, int] = field(default_factory=dict)
    parent: dict[str, str] | None = None  # {"id", "file"} of the backup an incremental one extends
    format: str = FORMAT
    format_version: int = FORMAT_VERSION

    @property
    def incremental(self) -> bool:
        return self.parent is not None

    @property
    def database(self) -> Member:
        return next(member for member in self.members if member.kind == DATABASE)

    def held_blobs(self) -> dict[str, Member]:
        return {member.sha256: member for member in self.members if member.kind == BLOB}

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), indent=2, sort_keys=True).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> Manifest:
        try:
            data = json.loads(raw)
            if data.get("format") != FORMAT:
                raise BackupError("the first member is not a caseflow backup manifest")
            if data.get("format_version") != FORMAT_VERSION:
                raise BackupError(f"unsupported backup format version {data.get('format_version')!r}")
            data["members"] = [Member(**member) for member in data["members"]]
            manifest = cls(**data)
            _check(manifest)
            return manifest
        except BackupError:
            raise
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise BackupError(f"the manifest is not valid: {exc}") from None


def _check(manifest: Manifest) -> None:
    kinds = [member.kind for member in manifest.members]
    if kinds.count(DATABASE) != 1:
        raise BackupError("the manifest must name exactly one database member")
    names = [member.name for member in manifest.members]
    if len(set(names)) != len(names):
        raise BackupError("the manifest names a member twice")
    for member in manifest.members:
        safe_member_name(member.name)
        if member.kind == BLOB and member.sha256 not in manifest.blobs:
            raise BackupError(f"blob member {member.name} is not among the manifest's blobs")


def safe_member_name(name: str) -> str:
    """A relative path with no `..`: members are written under a restore target and must stay in it."""
    parts = name.split("/")
    if not name or name.startswith("/") or any(part in ("", ".", "..") for part in parts) or "\\" in name:
        raise BackupError(f"unsafe member name in the manifest: {name!r}")
    return name
