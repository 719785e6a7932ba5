"""Backup and restore of the case service on PostgreSQL: the database and the vault's blobs come
back equal, in every compression and through an incremental chain; damage is caught by verify; a
dry run writes nothing; restore refuses targets that are not empty."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from casemgmt.vault.services import document_delete, document_upload
from casemgmt.vault.uploads import HashedUpload
from tests.support.backups import (
    empty_database,
    files_under,
    flip_byte,
    rewrite_archive,
    table_digests,
    url_of,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("vault_root")]


@pytest.fixture
def backups(tmp_path) -> Path:
    folder = tmp_path / "backups"
    folder.mkdir()
    return folder


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, "--no-progress", stdout=out)
    return out.getvalue()


def upload(user, content: bytes, case=None):
    return document_upload(user=user, upload=HashedUpload.from_bytes(content, name="notes.txt"), case=case)


@pytest.fixture
def data(admin_user, make_case):
    cases = [make_case() for _ in range(3)]
    upload(admin_user, b"first document", cases[0])
    upload(admin_user, b"second document", cases[1])
    upload(admin_user, b"first document", cases[2])  # the same bytes: one blob, two documents
    upload(admin_user, b"loose document")
    return cases


def source_url() -> str:
    return url_of(connection.settings_dict)


def test_round_trip_restores_equal_data_and_blobs(data, backups, vault_root, tmp_path):
    archive = backups / "full.tar.gz"
    out = run("backup", "--output", str(archive), "--verify")
    assert "3 of 3 blob(s) held" in out and "Verified" in out
    with empty_database(connection.settings_dict) as url:
        run(
            "restore",
            "--input",
            str(archive),
            "--target",
            str(tmp_path / "restored"),
            "--verify",
            "--database-url",
            url,
        )
        assert table_digests(url) == table_digests(source_url())
    restored = files_under(tmp_path / "restored")
    assert {name: body for name, body in restored.items() if name.startswith("blobs/")} == files_under(
        vault_root
    )
    assert set(restored) - set(files_under(vault_root)) == {
        "manifest.json",
        "metadata.json",
        "database/postgresql.dump",
    }


def test_metadata_holds_schema_and_fingerprint_and_no_secrets(data, backups, settings, tmp_path):
    archive = backups / "full.tar.gz"
    run("backup", "--output", str(archive))
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        metadata = tar.extractfile("metadata.json").read().decode()  # type: ignore[union-attr]
    assert names[0] == "manifest.json"
    parsed = json.loads(metadata)
    assert parsed["schema"]["latest"]["vault"].startswith("0002")
    assert parsed["schema"]["migrations"] > 10 and len(parsed["settings_fingerprint"]["sha256"]) == 64
    for secret in (settings.SECRET_KEY, settings.JWT["SIGNING_KEY"]):
        assert secret not in metadata


@pytest.mark.parametrize(
    ("compression", "magic"), [("gzip", b"\x1f\x8b"), ("bzip2", b"BZh"), ("xz", b"\xfd7zXZ")]
)
def test_each_compression_round_trips(data, backups, vault_root, tmp_path, compression, magic):
    archive = backups / f"full.{compression}"
    run("backup", "--output", str(archive), "--compress", compression)
    assert archive.read_bytes().startswith(magic)
    assert "OK: backup" in run("backup", "verify", str(archive))
    run("restore", "--input", str(archive), "--target", str(tmp_path / "restored"))
    restored = files_under(tmp_path / "restored")
    assert {name: body for name, body in restored.items() if name.startswith("blobs/")} == files_under(
        vault_root
    )


def manifest_of(archive: Path) -> dict:
    with tarfile.open(archive) as tar:
        return json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]


def test_incremental_chain_holds_only_new_blobs_and_restores_whole(
    data, admin_user, backups, vault_root, tmp_path
):
    run("backup", "--output", str(backups / "1-full.tar.gz"))
    upload(admin_user, b"added after the full backup", data[0])
    run("backup", "--output", str(backups / "2-incr.tar.xz"), "--compress", "xz", "--incremental")
    document = upload(admin_user, b"added after the first increment", data[1])
    document_delete(user=admin_user, document=data[1].documents.exclude(pk=document.pk).get())
    run("backup", "--output", str(backups / "3-incr.tar.gz"), "--incremental")

    first, second, third = (manifest_of(backups / name) for name in sorted(p.name for p in backups.iterdir()))
    held = [[m["sha256"] for m in manifest["members"] if m["kind"] == "blob"] for manifest in (second, third)]
    assert len(held[0]) == 1 and len(held[1]) == 1 and held[0] != held[1]
    assert second["parent"]["id"] == first["backup_id"] and third["parent"]["id"] == second["backup_id"]
    assert len(third["blobs"]) == 4  # the second document's bytes were released with it

    with empty_database(connection.settings_dict) as url:
        target = tmp_path / "restored"
        run(
            "restore",
            "--input",
            str(backups / "3-incr.tar.gz"),
            "--target",
            str(target),
            "--verify",
            "--database-url",
            url,
        )
        assert table_digests(url) == table_digests(source_url())
    restored = files_under(tmp_path / "restored")
    assert {name: body for name, body in restored.items() if name.startswith("blobs/")} == files_under(
        vault_root
    )


def test_incremental_restore_needs_its_parents(data, admin_user, backups, tmp_path):
    run("backup", "--output", str(backups / "1-full.tar.gz"))
    upload(admin_user, b"new bytes")
    run("backup", "--output", str(backups / "2-incr.tar.gz"), "--incremental")
    (backups / "1-full.tar.gz").rename(tmp_path / "moved-away.tar.gz")
    with pytest.raises(CommandError, match="parent backup .* is not in"):
        run("restore", "--input", str(backups / "2-incr.tar.gz"), "--target", str(tmp_path / "restored"))
    assert not (tmp_path / "restored").exists()


def test_incremental_without_an_earlier_backup_is_refused(data, backups):
    with pytest.raises(CommandError, match="needs an earlier casemgmt backup"):
        run("backup", "--output", str(backups / "incr.tar.gz"), "--incremental")


def dump_cut_in_half(name: str, body: bytes) -> bytes:
    return body[: len(body) // 2] if name.startswith("database/") else body


def first_blob_flipped(name: str, body: bytes) -> bytes:
    return flip_byte(body) if name.startswith("blobs/") else body


def blob_dropped(name: str, body: bytes) -> bytes | None:
    return None if name.startswith("blobs/") else body


DAMAGES = {  # how the archive is damaged -> what verify says
    "flipped byte in the file": "damaged or truncated|does not match|is missing",
    "file cut short": "damaged or truncated",
    "flipped byte in a member": "does not match its SHA-256 checksum",
    "missing member": "is missing",
    "dump cut short, manifest agreeing": "the database dump is not valid",
}


def damaged_copy(archive: Path, damaged: Path, damage: str) -> None:
    raw = archive.read_bytes()
    if damage == "flipped byte in the file":
        damaged.write_bytes(flip_byte(raw, len(raw) * 3 // 4))
    elif damage == "file cut short":
        damaged.write_bytes(raw[: len(raw) * 3 // 4])
    elif damage == "flipped byte in a member":
        rewrite_archive(archive, damaged, first_blob_flipped)
    elif damage == "missing member":
        rewrite_archive(archive, damaged, blob_dropped)
    else:
        rewrite_archive(archive, damaged, dump_cut_in_half, fix_manifest=True)


def test_verify_catches_damage(data, backups, tmp_path):
    """One backup, damaged five ways (one test: each backup costs a database set-up)."""
    archive = backups / "full.tar.gz"
    run("backup", "--output", str(archive))
    for number, (damage, message) in enumerate(DAMAGES.items()):
        damaged, target = tmp_path / f"damaged-{number}.tar.gz", tmp_path / f"restored-{number}"
        damaged_copy(archive, damaged, damage)
        with pytest.raises(CommandError, match=message):
            run("backup", "verify", str(damaged))
        with pytest.raises(CommandError):  # and restore --verify refuses it before writing anything
            run("restore", "--input", str(damaged), "--target", str(target), "--verify")
        assert not target.exists(), damage
    assert "OK: backup" in run("backup", "verify", str(archive))  # the original was never touched


def test_restore_without_verify_still_refuses_a_damaged_member(data, backups, tmp_path):
    archive, damaged = backups / "full.tar.gz", tmp_path / "damaged.tar.gz"
    run("backup", "--output", str(archive))
    rewrite_archive(archive, damaged, first_blob_flipped)
    with pytest.raises(CommandError, match="does not match its checksum"):
        run("restore", "--input", str(damaged), "--target", str(tmp_path / "restored"))


def test_dry_run_changes_nothing(data, backups, tmp_path):
    archive = backups / "full.tar.gz"
    run("backup", "--output", str(archive))
    with empty_database(connection.settings_dict) as url:
        out = run(
            "restore",
            "--input",
            str(archive),
            "--target",
            str(tmp_path / "restored"),
            "--dry-run",
            "--verify",
            "--database-url",
            url,
        )
        assert table_digests(url) == {}
    assert not (tmp_path / "restored").exists()
    assert (
        "Dry run" in out and "database/postgresql.dump" in out and "3 blob(s)" in out and "then load" in out
    )


def test_restore_refuses_a_non_empty_target(data, backups, tmp_path):
    archive = backups / "full.tar.gz"
    run("backup", "--output", str(archive))
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "keep.txt").write_text("mine")
    with pytest.raises(CommandError, match="not an empty folder"):
        run("restore", "--input", str(archive), "--target", str(occupied))
    assert [p.name for p in occupied.iterdir()] == ["keep.txt"]
    with pytest.raises(CommandError, match="is not empty"):  # the service's own database
        run(
            "restore",
            "--input",
            str(archive),
            "--target",
            str(tmp_path / "new"),
            "--database-url",
            source_url(),
        )
    assert not (tmp_path / "new").exists()


def test_backup_never_overwrites_and_verify_form_is_strict(data, backups):
    archive = backups / "full.tar.gz"
    archive.write_bytes(b"something else")
    with pytest.raises(CommandError, match="already exists"):
        run("backup", "--output", str(archive))
    assert archive.read_bytes() == b"something else"
    with pytest.raises(CommandError, match="not a backup archive|damaged"):
        run("backup", "verify", str(archive))
    with pytest.raises(CommandError, match="--output is required"):
        run("backup")
    with pytest.raises(CommandError, match="unknown action"):
        run("backup", "check", str(archive))


def test_archive_names_the_connector_keys_and_a_files_only_restore_says_so(data, backups, settings, tmp_path):
    archive = backups / "full.tar.gz"
    run("backup", "--output", str(archive))
    with tarfile.open(archive) as tar:
        metadata = json.loads(tar.extractfile("metadata.json").read())  # type: ignore[union-attr]
        raw = b"".join(tar.extractfile(name).read() for name in tar.getnames())  # type: ignore[union-attr]
    assert len(metadata["encryption_key_ids"]["FIELD_ENCRYPTION_KEYS"]) == 1
    assert all(key.encode() not in raw for key in settings.FIELD_ENCRYPTION_KEYS)
    assert "holds all 1 the backup was taken with" in run("backup", "verify", str(archive))

    out = run("restore", "--input", str(archive), "--target", str(tmp_path / "files"))
    assert "the database is NOT restored" in out and "CASE_RESTORE_DATABASE_URL" in out

    settings.FIELD_ENCRYPTION_KEYS = ["b3RoZXIta2V5LW90aGVyLWtleS1vdGhlci1rZXktMzI="]
    assert "lacks encryption keys the backup was taken with" in run("backup", "verify", str(archive))
