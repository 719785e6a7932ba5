"""The manifest: the archive's first member, naming every other member with its size and SHA-256.

It comes first so that reading it (to plan a restore, to find an incremental backup's parent)
decompresses only the start of the archive. Every checksum is known before the members are
written: the database dump and the metadata are staged to files first, and a blob's checksum is
its name (the bytes are hashed again while they are copied, and a mismatch fails the backup).
"""

from __future__ import annotations

import json
import re
from dataclasses import MISSING, asdict, dataclass, field, fields
from datetime import datetime
from typing import Any

from shared.backup.errors import BackupError

FORMAT = "caseflow-backup"
# 2: fixed compression framing and the seal. Version 1 archives still verify and restore, without
# those two checks.
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
MANIFEST = "manifest.json"
METADATA = "metadata.json"
SEAL = "seal.json"  # the last member: the manifest's SHA-256 (listed in no manifest)
DATABASE, BLOB, METADATA_KIND = "database", "blob", "metadata"
SHA256 = re.compile(r"[0-9a-f]{64}")


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
        """The manifest, or a BackupError naming in one line what is wrong with it."""
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise BackupError(f"{MANIFEST}: not valid JSON ({exc})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise BackupError(f"{MANIFEST}: the first member is not a caseflow backup manifest")
        if data.get("format_version") not in READABLE_VERSIONS:
            raise BackupError(f"{MANIFEST}: unsupported backup format version {data.get('format_version')!r}")
        _fields_exactly(data, cls, MANIFEST)
        members = data["members"]
        if not isinstance(members, list):
            raise BackupError(f"{MANIFEST} is not valid: 'members' is not a list")
        data["members"] = [_member(index, entry) for index, entry in enumerate(members, 1)]
        manifest = cls(**data)
        _check(manifest)
        return manifest


def _fields_exactly(data: dict[str, Any], kind: type, where: str) -> None:
    known = {item.name: item for item in fields(kind)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise BackupError(f"{where}: unknown field {unknown[0]!r}")
    required = [name for name, item in known.items() if item.default is item.default_factory is MISSING]
    missing = [name for name in required if name not in data]
    if missing:
        raise BackupError(f"{where}: missing field {missing[0]!r}")


def _member(index: int, entry: Any) -> Member:
    where = f"{MANIFEST}: member {index}"
    if not isinstance(entry, dict):
        raise BackupError(f"{where} is not an object")
    _fields_exactly(entry, Member, where)
    if not all(isinstance(entry[name], str) for name in ("name", "kind", "sha256")):
        raise BackupError(f"{where}: name, kind and sha256 must be text")
    if entry["kind"] not in (DATABASE, BLOB, METADATA_KIND):
        raise BackupError(f"{where}: unknown kind {entry['kind']!r}")
    if type(entry["size"]) is not int or entry["size"] < 0:
        raise BackupError(f"{where}: size {entry['size']!r} is not a byte count")
    if not SHA256.fullmatch(entry["sha256"]):
        raise BackupError(f"{where}: sha256 {entry['sha256']!r} is not a SHA-256 in hex")
    return Member(**entry)


def _check(manifest: Manifest) -> None:
    _check_fields(manifest)
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


def _check_fields(manifest: Manifest) -> None:
    for name in ("backup_id", "service", "created_at", "compression", "database_vendor"):
        if not isinstance(getattr(manifest, name), str):
            raise BackupError(f"{MANIFEST}: {name} is not text")
    try:
        datetime.fromisoformat(manifest.created_at)
    except ValueError:
        raise BackupError(f"{MANIFEST}: created_at {manifest.created_at!r} is not a date and time") from None
    blobs = manifest.blobs
    if not isinstance(blobs, dict) or not all(
        SHA256.fullmatch(str(sha)) and type(size) is int and size >= 0 for sha, size in blobs.items()
    ):
        raise BackupError(f"{MANIFEST}: blobs must map SHA-256 digests to sizes")
    parent = manifest.parent
    if parent is not None and (
        not isinstance(parent, dict)
        or set(parent) != {"id", "file"}
        or not all(map(isinstance, parent.values(), [str, str]))
    ):
        raise BackupError(f'{MANIFEST}: parent must be null or {{"id", "file"}}')


def safe_member_name(name: str) -> str:
    """A relative path with no `..`: members are written under a restore target and must stay in it."""
    parts = name.split("/")
    if not name or name.startswith("/") or any(part in ("", ".", "..") for part in parts) or "\\" in name:
        raise BackupError(f"unsafe member name in the manifest: {name!r}")
    return name
