"""Database dumps taken from one snapshot, and loads into an empty target database.

PostgreSQL: a REPEATABLE READ transaction exports its snapshot (`pg_export_snapshot()`); pg_dump
runs with `--snapshot` while that transaction stays open, and the blob list and the applied
migrations are read in the same transaction, so all three describe the same instant however much
the service writes meanwhile. SQLite: the online backup API copies the database consistently, and
the lists are read from that copy. Passwords reach the PostgreSQL tools through PGPASSWORD in their
environment, never on a command line.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import environ
import psycopg
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.utils import load_backend
from psycopg.conninfo import make_conninfo

from shared.backup.errors import BackupError

Query = Callable[[str], list[tuple[Any, ...]]]
POSTGRESQL, SQLITE = "postgresql", "sqlite"
DUMP_MEMBER = {POSTGRESQL: "database/postgresql.dump", SQLITE: "database/sqlite3.db"}


@dataclass(frozen=True)
class Database:
    vendor: str
    name: str
    user: str = ""
    password: str = ""
    host: str = ""
    port: str = ""
    sslmode: str = ""

    @classmethod
    def from_settings(cls, settings_dict: dict[str, Any]) -> Database:
        engine = settings_dict.get("ENGINE", "")
        if "postgresql" in engine:
            vendor = POSTGRESQL
        elif "sqlite3" in engine:
            vendor = SQLITE
        else:
            raise BackupError(f"backups support PostgreSQL and SQLite databases, not {engine}")
        options = settings_dict.get("OPTIONS") or {}
        return cls(
            vendor=vendor,
            name=str(settings_dict.get("NAME") or ""),
            user=str(settings_dict.get("USER") or ""),
            password=str(settings_dict.get("PASSWORD") or ""),
            host=str(settings_dict.get("HOST") or ""),
            port=str(settings_dict.get("PORT") or ""),
            sslmode=str(options.get("sslmode") or ""),
        )

    @classmethod
    def from_url(cls, url: str) -> Database:
        try:
            config = environ.Env.db_url_config(url)
        except Exception as exc:  # django-environ raises several types for a malformed URL
            raise BackupError(f"the target database URL is not valid: {exc}") from None
        return cls.from_settings(config)

    def label(self) -> str:
        """Where the database is, without its password."""
        if self.vendor == SQLITE:
            return f"SQLite file {self.name}"
        return f"PostgreSQL database {self.name} on {self.host or 'local socket'}:{self.port or 5432}"

    def pg_args(self) -> list[str]:
        args = ["--dbname", self.name]
        for flag, value in (("--host", self.host), ("--port", self.port), ("--username", self.user)):
            if value:
                args += [flag, value]
        return args

    def pg_env(self) -> dict[str, str]:
        env = dict(os.environ)
        if self.password:
            env["PGPASSWORD"] = self.password
        if self.sslmode:
            env["PGSSLMODE"] = self.sslmode
        return env

    def connect(self) -> psycopg.Connection[Any]:
        params = {"dbname": self.name, "user": self.user, "password": self.password, "host": self.host}
        params |= {"port": self.port, "sslmode": self.sslmode}
        try:
            return psycopg.connect(make_conninfo(**{key: value for key, value in params.items() if value}))
        except psycopg.Error as exc:
            raise BackupError(f"cannot connect to the {self.label()}: {exc}".strip()) from None


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise BackupError(f"{name} is not installed: install the PostgreSQL client tools (postgresql-client)")
    return path


def _run(args: list[str], database: Database, what: str) -> str:
    result = subprocess.run(args, env=database.pg_env(), capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BackupError(f"{what} failed: {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout


def tool_version(name: str) -> tuple[int, str]:
    """Major version and full text of a PostgreSQL client tool, e.g. (15, 'pg_dump (PostgreSQL) 15.20')."""
    text = subprocess.run(
        [_tool(name), "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    found = re.search(r"(\d+)(?:\.\d+)?", text)
    return (int(found.group(1)) if found else 0), text


@dataclass
class Snapshot:
    query: Query
    server_version: str
    dump_tool: str


@contextmanager
def dump_snapshot(database: Database, dump_path: Path) -> Iterator[Snapshot]:
    """Dumps the database to `dump_path`; the yielded `query` reads the very state dumped."""
    if database.vendor == POSTGRESQL:
        with _postgresql_snapshot(database, dump_path) as snapshot:
            yield snapshot
    else:
        with _sqlite_snapshot(database, dump_path) as snapshot:
            yield snapshot


@contextmanager
def _postgresql_snapshot(database: Database, dump_path: Path) -> Iterator[Snapshot]:
    major, tool_text = tool_version("pg_dump")
    with database.connect() as connection:
        server = int(connection.info.server_version) // 10000
        if major < server:
            raise BackupError(
                f"{tool_text} cannot dump a PostgreSQL {server} server: install pg_dump {server} or newer"
            )
        connection.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        connection.read_only = True
        row = connection.execute("SELECT pg_export_snapshot()").fetchone()
        assert row is not None
        # Uncompressed custom format: the archive's own compression applies once, and pg_restore
        # can still list and load it selectively.
        args = [_tool("pg_dump"), "--format=custom", "--compress=0", f"--snapshot={row[0]}"]
        _run([*args, "--file", str(dump_path), *database.pg_args()], database, "pg_dump")

        def query(sql: str) -> list[tuple[Any, ...]]:
            return list(connection.execute(sql).fetchall())  # type: ignore[arg-type]

        yield Snapshot(query=query, server_version=str(server), dump_tool=tool_text)
        connection.rollback()


@contextmanager
def _sqlite_snapshot(database: Database, dump_path: Path) -> Iterator[Snapshot]:
    if not Path(database.name).is_file():
        raise BackupError(f"the {database.label()} does not exist")
    source = sqlite3.connect(f"file:{database.name}?mode=ro", uri=True)
    copy = sqlite3.connect(dump_path)
    try:
        source.backup(copy)
        yield Snapshot(
            query=lambda sql: copy.execute(sql).fetchall(),
            server_version=sqlite3.sqlite_version,
            dump_tool=f"SQLite online backup API {sqlite3.sqlite_version}",
        )
    finally:
        source.close()
        copy.close()


def dump_check(vendor: str, dump_path: Path) -> None:
    """Reads the whole dump as a restore would: a cut-off or garbled dump fails here."""
    if vendor == POSTGRESQL:
        args = [_tool("pg_restore"), "--file", os.devnull, str(dump_path)]
        result = subprocess.run(args, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise BackupError(f"the database dump is not valid: {result.stderr.strip()}")
        return
    try:
        with sqlite3.connect(f"file:{dump_path}?mode=ro", uri=True) as connection:
            verdict = connection.execute("PRAGMA integrity_check").fetchone()
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"the database copy is not a valid SQLite database: {exc}") from None
    if verdict is None or verdict[0] != "ok":
        raise BackupError(f"the database copy fails SQLite's integrity check: {verdict}")


def ensure_empty(database: Database) -> None:
    """Restore loads only into an empty database: it never merges into or overwrites data."""
    if database.vendor == SQLITE:
        path = Path(database.name)
        if path.exists() and path.stat().st_size > 0:
            raise BackupError(f"the target {database.label()} is not empty")
        return
    with database.connect() as connection:
        row = connection.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')"
            " AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'"
        ).fetchone()
    if row is None or row[0]:
        raise BackupError(f"the target {database.label()} is not empty ({row[0] if row else '?'} relations)")


def load(database: Database, vendor: str, dump_path: Path) -> None:
    if database.vendor != vendor:
        raise BackupError(f"a {vendor} dump cannot be loaded into a {database.label()}")
    if vendor == SQLITE:
        Path(database.name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(dump_path, database.name)
        return
    args = [_tool("pg_restore"), "--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction"]
    _run([*args, *database.pg_args(), str(dump_path)], database, "pg_restore")


@contextmanager
def django_connection(database: Database, template: dict[str, Any]) -> Iterator[BaseDatabaseWrapper]:
    """A Django connection to a PostgreSQL `database`, outside `connections` (nothing else can pick
    it up), otherwise configured like `template` (the service's own): for set-up code written
    against Django connections, run on a database the service does not use yet."""
    settings_dict = {**template, "NAME": database.name, "USER": database.user}
    settings_dict |= {"PASSWORD": database.password, "HOST": database.host, "PORT": database.port}
    settings_dict["ENGINE"] = "django.db.backends.postgresql"
    postgresql = "postgresql" in str(template.get("ENGINE", ""))  # a SQLite service's options do not apply
    options = {
        key: value for key, value in (template.get("OPTIONS") or {}).items() if postgresql and key != "pool"
    }
    if database.sslmode:
        options["sslmode"] = database.sslmode
    settings_dict["OPTIONS"] = options
    wrapper = load_backend(settings_dict["ENGINE"]).DatabaseWrapper(settings_dict, "restore-target")
    try:
        yield wrapper
    finally:
        wrapper.close()
