"""Verifying an archive without restoring it: every byte of the file is covered. The compression
framing (header compared byte for byte, data and trailer by the format's own checksums, nothing
after it), the manifest against the seal's SHA-256, every member against the manifest (size and
SHA-256, none missing, none extra), and the database dump read through as a restore would."""

from __future__ import annotations

import tarfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import BinaryIO

from shared.backup.archive import ArchiveReader, archive_reader, copy_hashed
from shared.backup.database import dump_check
from shared.backup.errors import BackupError, Damaged
from shared.backup.manifest import DATABASE, Manifest, Member
from shared.backup.progress import progress_bar


@dataclass
class Verification:
    manifest: Manifest
    problems: list[str] = field(default_factory=list)
    checked: int = 0


def archive_verify(path: Path, *, show_progress: bool = True) -> Manifest:
    """The archive's manifest when every check passes; otherwise a BackupError listing each problem."""
    with TemporaryDirectory(prefix="verify-") as staging:
        dump = Path(staging) / "database"
        with archive_reader(path) as reader:
            result = Verification(manifest=reader.manifest)
            total = sum(member.size for member in reader.manifest.members)
            with progress_bar(total=total, description="verify", enabled=show_progress) as bar:
                _check_members(reader.members(), result, dump, bar)
            _check_end(reader, result)
        if not result.problems:
            _check_dump(result, dump)
    if result.problems:  # one line, for logs and alerts
        raise BackupError(f"{path} failed verification: " + "; ".join(result.problems))
    return result.manifest


def _check_end(reader: ArchiveReader, result: Verification) -> None:
    try:
        reader.stream.drain()
    except Damaged as exc:  # the bytes read before are suspect too: this is the one reason to give
        result.problems = [str(exc)]
        return
    try:
        reader.check_seal()
    except Damaged as exc:
        result.problems.append(str(exc))


def _check_members(
    members: Iterator[tuple[tarfile.TarInfo, BinaryIO]], result: Verification, dump: Path, bar: object
) -> None:
    expected = {member.name: member for member in result.manifest.members}
    seen: set[str] = set()
    for info, stream in members:
        member = expected.get(info.name)
        if member is None or info.name in seen:
            result.problems.append(f"member {info.name} is not in the manifest (or appears twice)")
            continue
        seen.add(info.name)
        _check_member(member, info, stream, result, dump, bar)
    for name in sorted(expected.keys() - seen):
        result.problems.append(f"member {name} is missing")


def _check_member(
    member: Member, info: tarfile.TarInfo, stream: BinaryIO, result: Verification, dump: Path, bar: object
) -> None:
    if member.kind == DATABASE:  # kept to be read through by the dump tools afterwards
        with dump.open("wb") as target:
            sha256, size = copy_hashed(stream, target, bar)
    else:
        sha256, size = copy_hashed(stream, None, bar)
    result.checked += 1
    if size != member.size:
        result.problems.append(f"member {member.name} has {size} bytes, the manifest says {member.size}")
    elif sha256 != member.sha256:
        result.problems.append(f"member {member.name} does not match its SHA-256 checksum (damaged)")


def _check_dump(result: Verification, dump: Path) -> None:
    try:
        dump_check(result.manifest.database_vendor, dump)
    except BackupError as exc:
        result.problems.append(str(exc))
