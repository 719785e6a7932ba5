"""Reading and writing the tar archive, hashing every member's bytes as they stream through.

Reading is one sequential pass, so a compressed archive is decompressed once, and every failure of
the tar or compression layers (a flipped byte, a cut-off file) becomes a BackupError. The
compression framing is checked byte for byte (container.py); the manifest, which no other
checksum covers, by the seal: the archive's last member, holding the manifest's SHA-256.
"""

from __future__ import annotations

import hashlib
import io
import json
import lzma
import tarfile
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, BinaryIO

from shared.backup.container import CheckedStream, compressed_writer
from shared.backup.errors import BackupError, Damaged
from shared.backup.manifest import MANIFEST, METADATA, SEAL, Manifest

COMPRESSIONS = {"gzip": "gz", "bzip2": "bz2", "xz": "xz"}
CHUNK = 1024 * 1024
# Raised by tarfile and the decompressors on damaged or truncated input.
DAMAGE = (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError, OSError, ValueError)


class HashingReader(io.RawIOBase):
    """Passes a file's bytes through, hashing and counting them (and reporting progress)."""

    def __init__(self, raw: IO[bytes], progress: object | None = None) -> None:
        self.raw, self.progress = raw, progress
        self.digest, self.length = hashlib.sha256(), 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.digest.update(data)
        self.length += len(data)
        if self.progress is not None:
            self.progress.update(len(data))  # type: ignore[attr-defined]
        return data

    def hexdigest(self) -> str:
        return self.digest.hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


class ArchiveWriter:
    def __init__(self, tar: tarfile.TarFile) -> None:
        self.tar = tar

    def add_bytes(self, name: str, data: bytes) -> None:
        self.tar.addfile(_info(name, len(data)), io.BytesIO(data))

    def add_stream(
        self, name: str, source: IO[bytes], *, size: int, sha256: str, progress: object = None
    ) -> None:
        """Copies exactly `size` bytes; fails when they do not hash to `sha256` (the manifest,
        already written, promises that digest)."""
        reader = HashingReader(source, progress)
        try:
            self.tar.addfile(_info(name, size), reader)  # type: ignore[arg-type]
        except OSError as exc:  # tarfile's "unexpected end of data": the file shrank
            raise BackupError(f"{name} could not be copied whole: {exc}") from None
        if reader.hexdigest() != sha256:
            raise BackupError(
                f"{name} does not hash to its expected SHA-256 {sha256}: the stored copy is damaged"
            )


def _info(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = size, int(time.time()), 0o640
    return info


@contextmanager
def archive_writer(path: Path, compression: str) -> Iterator[ArchiveWriter]:
    if compression not in COMPRESSIONS:
        raise BackupError(f"unknown compression {compression!r}: one of {', '.join(COMPRESSIONS)}")
    with (
        path.open("wb") as raw,
        compressed_writer(raw, compression) as stream,
        tarfile.open(fileobj=stream, mode="w|") as tar,
    ):
        yield ArchiveWriter(tar)


def seal_bytes(manifest: bytes) -> bytes:
    return json.dumps({"manifest_sha256": hashlib.sha256(manifest).hexdigest()}, sort_keys=True).encode()


class ArchiveReader:
    def __init__(self, tar: tarfile.TarFile, path: Path, stream: CheckedStream) -> None:
        self.tar, self.path, self.stream = tar, path, stream
        self.seal: bytes | None = None
        self.manifest = self._manifest()
        if self.manifest.format_version >= 2 and not stream.canonical_header:
            raise Damaged(f"damaged: the {stream.compression} header is not the one backups write")

    def _manifest(self) -> Manifest:
        first = self.tar.next()
        if first is None or first.name != MANIFEST or not first.isfile():
            raise BackupError(f"{self.path} is not a backup archive: its first member is not {MANIFEST}")
        if first.size > 256 * 1024 * 1024:
            raise BackupError(f"{self.path}: the manifest is implausibly large")
        raw = self._read(first).read()
        self.manifest_sha256 = hashlib.sha256(raw).hexdigest()
        try:
            return Manifest.from_json(raw)
        except BackupError as exc:
            raise Damaged(str(exc)) from None

    def _read(self, info: tarfile.TarInfo) -> IO[bytes]:
        handle = self.tar.extractfile(info)
        if handle is None:
            raise BackupError(f"{self.path}: member {info.name} is not a regular file")
        return handle

    def members(self) -> Iterator[tuple[tarfile.TarInfo, BinaryIO]]:
        """The members after the manifest, each readable once, in archive order; the seal is kept
        for `finish`, not yielded."""
        while (info := self.tar.next()) is not None:
            if info.name == SEAL and self.seal is None:
                self.seal = self._read(info).read(64 * 1024)
                continue
            yield info, self._read(info)  # type: ignore[misc]

    def finish(self) -> None:
        """Once every member was read: the container ends as its checksums say, and the manifest
        is the one the seal names. Raises Damaged."""
        self.stream.drain()
        self.check_seal()

    def check_seal(self) -> None:
        if self.seal is None:
            if self.manifest.format_version >= 2:
                raise Damaged(f"damaged: {SEAL} is missing, so {MANIFEST} cannot be checked")
            return  # format 1 archives predate the seal
        try:
            recorded = json.loads(self.seal)["manifest_sha256"]
        except (ValueError, TypeError, KeyError):
            raise Damaged(f"damaged: {SEAL} is not valid") from None
        if recorded != self.manifest_sha256:
            raise Damaged(
                f"{MANIFEST} does not match the SHA-256 in {SEAL}: the manifest was changed or damaged"
            )


@contextmanager
def archive_reader(path: Path) -> Iterator[ArchiveReader]:
    """Opens an archive for one sequential pass; damage anywhere becomes a BackupError."""
    if not path.is_file():
        raise BackupError(f"{path} does not exist or is not a file")
    try:
        with path.open("rb") as raw:
            stream = CheckedStream(raw)
            with tarfile.open(fileobj=stream, mode="r|") as tar:  # type: ignore[call-overload]
                yield ArchiveReader(tar, path, stream)
    except Damaged as exc:
        raise BackupError(f"{path}: {exc}") from None
    except DAMAGE as exc:
        raise BackupError(f"{path} is damaged or truncated ({type(exc).__name__}: {exc})") from None


def read_manifest(path: Path) -> Manifest:
    with archive_reader(path) as reader:
        return reader.manifest


def read_metadata(path: Path) -> dict[str, Any]:
    """The metadata member (the second one), checked against the manifest."""
    with archive_reader(path) as reader:
        info = reader.tar.next()
        entry = next((m for m in reader.manifest.members if m.name == METADATA), None)
        if info is None or info.name != METADATA or entry is None:
            raise BackupError(f"{path}: the second member is not {METADATA}")
        data = reader._read(info).read()
    if hashlib.sha256(data).hexdigest() != entry.sha256:
        raise BackupError(f"{path}: {METADATA} does not match its checksum")
    try:
        return dict(json.loads(data))
    except ValueError:
        raise BackupError(f"{path}: {METADATA} is not valid JSON") from None


def copy_hashed(source: IO[bytes], target: IO[bytes] | None, progress: object = None) -> tuple[str, int]:
    """Copies (or, without a target, only reads) a stream; returns its SHA-256 and length."""
    reader = HashingReader(source, progress)
    while chunk := reader.read(CHUNK):
        if target is not None:
            target.write(chunk)
    return reader.hexdigest(), reader.length
