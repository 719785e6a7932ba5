"""Restoring an archive (and, for an incremental one, its ancestors) into an empty target folder,
optionally loading the dump into an empty database.

The target folder receives `manifest.json`, `metadata.json`, the dump under `database/` and every
blob the dumped database refers to under its storage key (e.g. `blobs/ab/cd/<sha256>`), the same
layout a filesystem store uses, so the folder can serve as that store's root. Nothing is written
before every check that can fail without reading the whole archive has passed (the target is
empty, the chain is complete, the database is empty, and with `verify` every archive verifies).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from django.db import connections

from shared.backup.archive import CHUNK, HashingReader, archive_reader, read_manifest, read_metadata
from shared.backup.create import archives_in
from shared.backup.database import POSTGRESQL, Database, django_connection, ensure_empty, load
from shared.backup.errors import BackupError
from shared.backup.manifest import BLOB, MANIFEST, METADATA, Manifest, Member
from shared.backup.metadata import applied_here, key_report
from shared.backup.profile import ServiceProfile
from shared.backup.progress import progress_bar
from shared.backup.verify import archive_verify

Say = Callable[[str], None]


@dataclass
class RestorePlan:
    chain: list[tuple[Path, Manifest]]  # the input first, then its ancestors
    target: Path
    database: Database | None
    profile: ServiceProfile
    # Per archive of the chain, the members to extract from it.
    extract: dict[Path, list[Member]] = field(default_factory=dict)
    keys: str | None = None  # whether this configuration holds the backup's encryption keys

    @property
    def manifest(self) -> Manifest:
        return self.chain[0][1]

    def not_loaded(self) -> str:
        variable = f" or {self.profile.restore_url_variable}" if self.profile.restore_url_variable else ""
        return (
            f"Warning: the database is NOT restored: no database to load into was named (--database-url"
            f"{variable}); only files are extracted. To load the dump, run restore again into an empty"
            " folder with --database-url naming an empty database."
        )

    def describe(self) -> list[str]:
        lines = [f"Restore backup {self.manifest.backup_id} ({self.manifest.created_at}) into {self.target}"]
        for path, members in self.extract.items():
            size = sum(member.size for member in members)
            lines.append(f"  from {path.name}: {len(members)} member(s), {size} bytes")
            lines += [f"    {member.name}" for member in members if member.kind != BLOB]
            blobs = sum(1 for member in members if member.kind == BLOB)
            if blobs:
                lines.append(f"    {blobs} blob(s) under blobs/")
        if self.database is not None:
            lines.append(f"  then load {self.manifest.database.name} into the {self.database.label()}")
            if self.profile.after_load is not None and self.database.vendor == POSTGRESQL:
                lines.append("  then grant the service's database roles their rights again")
        else:
            lines.append(self.not_loaded())
        if self.keys:
            lines.append(self.keys)
        return lines


def restore_plan(
    *, profile: ServiceProfile, source: Path, target: Path, database_url: str = ""
) -> RestorePlan:
    manifest = read_manifest(source)
    if manifest.service != profile.service:
        raise BackupError(f"{source} is a {manifest.service} backup; restore it with that service's command")
    _ensure_empty_folder(target)
    database = Database.from_url(database_url) if database_url else None
    if database is not None:
        if database.vendor != manifest.database_vendor:
            raise BackupError(f"a {manifest.database_vendor} dump cannot be loaded into a {database.label()}")
        ensure_empty(database)
    plan = RestorePlan(chain=_chain(source, manifest), target=target, database=database, profile=profile)
    plan.extract = _assign(plan.chain)
    plan.keys = key_report(profile=profile, metadata=read_metadata(source))
    return plan


def _ensure_empty_folder(target: Path) -> None:
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise BackupError(f"target {target} is not an empty folder: restore never overwrites or merges files")


def _chain(source: Path, manifest: Manifest) -> list[tuple[Path, Manifest]]:
    """The input and each ancestor it names, found among the archives in the input's folder."""
    chain = [(source, manifest)]
    known: dict[str, tuple[Path, Manifest]] | None = None
    while (parent := chain[-1][1].parent) is not None:
        if known is None:
            known = {found.backup_id: (path, found) for path, found in archives_in(source.parent)}
        if parent["id"] not in known:
            raise BackupError(
                f"parent backup {parent['id']} (file {parent['file']}) is not in {source.parent}"
            )
        if any(entry[1].backup_id == parent["id"] for entry in chain):
            raise BackupError(f"the chain of parent backups loops at {parent['id']}")
        chain.append(known[parent["id"]])
    return chain


def _assign(chain: list[tuple[Path, Manifest]]) -> dict[Path, list[Member]]:
    """Every blob the newest dump refers to, taken from the newest archive of the chain holding it."""
    newest = chain[0][1]
    extract: dict[Path, list[Member]] = {path: [] for path, _ in chain}
    extract[chain[0][0]] = [member for member in newest.members if member.kind != BLOB]
    wanted = set(newest.blobs)
    for path, manifest in chain:
        for sha, member in sorted(manifest.held_blobs().items()):
            if sha in wanted:
                extract[path].append(member)
                wanted.discard(sha)
    if wanted:
        raise BackupError(
            f"{len(wanted)} blob(s) the database refers to are in no archive of the chain, e.g. {min(wanted)}"
        )
    return {path: members for path, members in extract.items() if members}


def restore_run(
    *, plan: RestorePlan, verify: bool, show_progress: bool = True, say: Say = lambda _: None
) -> None:
    if verify:
        for path, _ in plan.chain:
            archive_verify(path, show_progress=show_progress)
            say(f"Verified {path.name}")
    plan.target.mkdir(parents=True, exist_ok=True)
    (plan.target / MANIFEST).write_bytes(plan.manifest.to_json())
    for path, members in plan.extract.items():
        _extract(path, members, plan.target, show_progress)
    _schema_notice(plan.target, say)
    if plan.keys:
        say(plan.keys)
    say(f"Restored {sum(len(members) for members in plan.extract.values())} member(s) into {plan.target}")
    if plan.database is None:
        say(plan.not_loaded())
        return
    load(plan.database, plan.manifest.database_vendor, plan.target / plan.manifest.database.name)
    say(f"Loaded the database into the {plan.database.label()}")
    _after_load(plan.profile, plan.database, say)


def _after_load(profile: ServiceProfile, database: Database, say: Say) -> None:
    """What the dump leaves out (grants to the service's roles), put back so that the service
    answers on the restored database as it did before, without a `migrate` first."""
    if profile.after_load is None or database.vendor != POSTGRESQL:
        return  # SQLite has no roles, grants or row-level security
    template = connections[profile.database_alias].settings_dict
    with django_connection(database, template) as connection:
        warnings = profile.after_load(connection)
    say("Granted the service's database roles their rights again")
    for line in warnings:
        say(line)


def _extract(path: Path, members: list[Member], target: Path, show_progress: bool) -> None:
    wanted = {member.name: member for member in members}
    total = sum(member.size for member in members)
    with (
        archive_reader(path) as reader,
        progress_bar(total=total, description=path.name, enabled=show_progress) as bar,
    ):
        for info, stream in reader.members():
            member = wanted.pop(info.name, None)
            if member is not None:
                _write_member(member, stream, target, bar)
        reader.finish()  # the manifest the plan followed is the sealed one; the trailer checks out
    if wanted:
        raise BackupError(f"{path} lacks member(s) its manifest names: {', '.join(sorted(wanted))}")


def _write_member(member: Member, stream: BinaryIO, target: Path, bar: object) -> None:
    destination = target / member.name
    reader = HashingReader(stream, bar)
    with _writable(destination) as handle:
        while chunk := reader.read(CHUNK):  # a damaged archive raises here, reported as such
            try:
                handle.write(chunk)
            except OSError as exc:  # the target's fault (full, not writable), not the archive's
                raise BackupError(f"cannot write {destination}: {exc}") from None
    if reader.length != member.size or reader.hexdigest() != member.sha256:
        raise BackupError(f"member {member.name} does not match its checksum: the archive is damaged")


def _writable(destination: Path) -> BinaryIO:
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
        return destination.open("wb")
    except OSError as exc:
        raise BackupError(f"cannot write {destination}: {exc}") from None


def _schema_notice(target: Path, say: Say) -> None:
    """Restoring a schema newer than this code works, but this code cannot run on it: say so."""
    try:
        latest = json.loads((target / METADATA).read_bytes())["schema"]["latest"]
    except (OSError, ValueError, KeyError, TypeError):
        return
    unknown = sorted(f"{app}.{name}" for app, name in latest.items() if f"{app}.{name}" not in applied_here())
    if unknown:
        say(f"Warning: the backup's schema has migrations this code does not know: {', '.join(unknown)}")
