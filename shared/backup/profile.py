"""What one service backs up: its database (always) and, optionally, content-addressed files kept
outside the database, listed by a table of the database itself."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from django.core.files.storage import Storage
from django.db.backends.base.base import BaseDatabaseWrapper

# Names that may hold credentials: never part of an archive, not even hashed.
SECRET_NAME = re.compile(r"SECRET|PASSWORD|TOKEN|CREDENTIAL|API_KEY|ENCRYPTION|SIGNING|PRIVATE", re.I)


@dataclass(frozen=True)
class BlobSet:
    """Files stored under their SHA-256. `table` has one row per file with its hex digest in
    `hash_column` and its size in `size_column`; `key` maps a digest to the file's name in
    `storage`, which is also its member name in the archive and its path under a restore target."""

    table: str
    storage: Callable[[], Storage]
    key: Callable[[str], str]
    hash_column: str = "sha256"
    size_column: str = "size"


@dataclass(frozen=True)
class ServiceProfile:
    service: str  # "casemgmt" or "orchestrator": an archive restores only into its own service
    fingerprint_settings: tuple[str, ...] = ()
    # Settings listing the keys encrypted columns need. The archive records one-way ids of them,
    # never the keys, so verify and restore can tell whether this configuration reads the data.
    key_settings: tuple[str, ...] = ()
    blobs: BlobSet | None = None
    database_alias: str = "default"
    # The environment variable naming the database a restore loads into, for messages.
    restore_url_variable: str = ""
    # Run on a PostgreSQL database right after a dump was loaded into it, with a connection as the
    # loading user: puts back what the dump leaves out (it is loaded without privileges, so grants
    # to roles are not in it). Idempotent; returns lines to show the operator (warnings).
    after_load: Callable[[BaseDatabaseWrapper], list[str]] | None = None

    def __post_init__(self) -> None:
        secret = [name for name in self.fingerprint_settings if SECRET_NAME.search(name)]
        if secret:
            raise ValueError(f"settings that may hold secrets cannot be fingerprinted: {secret}")
