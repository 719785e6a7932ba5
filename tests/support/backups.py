"""Helpers for backup and restore tests: fresh empty PostgreSQL databases to restore into, a digest of
every table's rows to compare databases, and rewriting an archive member by member to damage it."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg

ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"


def url_of(settings_dict: dict[str, Any], name: str | None = None) -> str:
    user = settings_dict.get("USER") or "postgres"
    password = f":{settings_dict['PASSWORD']}" if settings_dict.get("PASSWORD") else ""
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = settings_dict.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{name or settings_dict['NAME']}"


@contextmanager
def empty_database(settings_dict: dict[str, Any]) -> Iterator[str]:
    """A new, empty database on the test server (dropped afterwards); yields its URL."""
    token = os.environ.get("TEST_RUN_TOKEN", "") + os.environ.get("PYTEST_XDIST_WORKER", "")
    name = f"restore_{token}_{uuid.uuid4().hex[:8]}".lower()
    admin = url_of(settings_dict, "postgres")
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield url_of(settings_dict, name)
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def table_digests(url: str) -> dict[str, tuple[int, str]]:
    """Row count and an MD5 of every row's text, per table of the public schema."""
    with psycopg.connect(url.replace("postgres://", "postgresql://", 1)) as connection:
        tables = [
            row[0]
            for row in connection.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
            )
        ]
        digests = {}
        for table in tables:
            row = connection.execute(
                f"SELECT count(*), md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), ''))"
                f' FROM "{table}" t'
            ).fetchone()
            assert row is not None
            digests[table] = (row[0], row[1])
        return digests


def files_under(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in root.rglob("*") if path.is_file()}


Transform = Callable[[str, bytes], bytes | None]  # member name and bytes -> new bytes, or None to drop


def rewrite_archive(source: Path, target: Path, transform: Transform, *, fix_manifest: bool = False) -> None:
    """Copies an archive member by member through `transform`, written as backups write gzip (no
    name, time stamp 0). With `fix_manifest`, the manifest's sizes and checksums and the seal's
    digest of the manifest are updated to the new bytes (damage the checksums cannot see)."""
    with tarfile.open(source, "r:*") as tar:
        members = [(info.name, tar.extractfile(info).read()) for info in tar]  # type: ignore[union-attr]
    changed = [(name, transform(name, data)) for name, data in members]
    kept = [(name, data) for name, data in changed if data is not None]
    if fix_manifest:
        manifest = json.loads(kept[0][1])
        sizes = {name: data for name, data in kept}
        for entry in manifest["members"]:
            if entry["name"] in sizes:
                entry["size"] = len(sizes[entry["name"]])
                entry["sha256"] = hashlib.sha256(sizes[entry["name"]]).hexdigest()
        kept[0] = (kept[0][0], json.dumps(manifest).encode())
        seal = json.dumps({"manifest_sha256": hashlib.sha256(kept[0][1]).hexdigest()}).encode()
        kept = [(name, seal if name == "seal.json" else data) for name, data in kept]
    with (
        target.open("wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as stream,
        tarfile.open(fileobj=stream, mode="w|") as tar,
    ):
        for name, data in kept:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def flip_byte(data: bytes, at: int | None = None) -> bytes:
    at = len(data) // 2 if at is None else at
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]
