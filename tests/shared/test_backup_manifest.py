"""The manifest is checked before anything is written: a member name that would leave the restore
target, an unknown format or version, or a malformed document is a clear BackupError."""

from __future__ import annotations

import json

import pytest

from shared.backup.errors import BackupError
from shared.backup.manifest import Manifest, Member


def manifest_json(**changes) -> bytes:
    manifest = Manifest(
        backup_id="b1",
        service="casemgmt",
        created_at="2026-01-01T00:00:00+00:00",
        compression="gzip",
        database_vendor="postgresql",
        members=[Member("database/postgresql.dump", "database", 3, "0" * 64)],
    )
    data = json.loads(manifest.to_json())
    data.update(changes)
    return json.dumps(data).encode()


def test_a_valid_manifest_reads_back():
    assert Manifest.from_json(manifest_json()).database.name == "database/postgresql.dump"


@pytest.mark.parametrize("name", ["../escape", "/etc/passwd", "blobs/../../x", "blobs//x", "a\\b", ""])
def test_member_names_that_leave_the_target_are_refused(name):
    members = [
        {"name": "database/postgresql.dump", "kind": "database", "size": 3, "sha256": "0" * 64},
        {"name": name, "kind": "metadata", "size": 1, "sha256": "1" * 64},
    ]
    with pytest.raises(BackupError, match="unsafe member name"):
        Manifest.from_json(manifest_json(members=members))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (manifest_json(format="other"), "not a caseflow backup manifest"),
        (manifest_json(format_version=99), "unsupported backup format version"),
        (manifest_json(members=[]), "exactly one database member"),
        (manifest_json(members="nope"), "not valid"),
        (b"{not json", "not valid"),
    ],
)
def test_malformed_manifests_are_refused(raw, message):
    with pytest.raises(BackupError, match=message):
        Manifest.from_json(raw)
