"""The embedded configuration (SQLite, filesystem vault) backs up with SQLite's online backup API and
restores to an identical database file; the real command line reports damage to any byte of an
archive (compression header and trailer, manifest, members) in one line, with a non-zero exit and no
traceback. Runs `manage_case.py` as a child process, as an operator would."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.backups import files_under, flip_byte, rewrite_archive
from tests.support.processes import ROOT, child_env

SEED = """
from casemgmt.accounts.tenants import tenant_create
from casemgmt.accounts.models import User
from casemgmt.vault.services import document_upload
from casemgmt.vault.uploads import HashedUpload
tenant = tenant_create(name="Embedded", admin_email="admin@embedded.test", admin_password="long-enough-password-42")
admin = User.objects.get(tenant=tenant)
for text in (b"one", b"two"):
    document_upload(user=admin, upload=HashedUpload.from_bytes(text, name="a.txt"))
"""


@pytest.fixture(scope="module")
def embedded(tmp_path_factory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("embedded")
    env = child_env(
        {
            "DJANGO_SETTINGS_MODULE": "casemgmt.config.settings.local",
            "CASE_VAR_DIR": str(home / "var"),
            "CASE_DATABASE_URL": f"sqlite:///{home / 'case.sqlite3'}",
            "CASE_VAULT_ROOT": str(home / "vault"),
            "CASE_RESTORE_DATABASE_URL": "",
        }
    )
    manage(env, "migrate", "-v", "0")
    manage(env, "shell", "-c", SEED)
    return {**env, "HOME_DIR": str(home)}


def manage(env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, str(ROOT / "manage_case.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    if check:
        assert result.returncode == 0, result.stderr
    return result


def dump_of(path: Path) -> list[str]:
    with sqlite3.connect(path) as db:
        return list(db.iterdump())


def test_sqlite_round_trip(embedded):
    home = Path(embedded["HOME_DIR"])
    archive, target, restored_db = home / "embedded.tar.bz2", home / "restored", home / "restored.sqlite3"
    out = manage(embedded, "backup", "--output", str(archive), "--compress", "bzip2", "--verify").stdout
    assert "sqlite dump, 2 of 2 blob(s) held" in out and "Verified" in out
    manage(
        embedded,
        "restore",
        "--input",
        str(archive),
        "--target",
        str(target),
        "--database-url",
        f"sqlite:///{restored_db}",
    )
    assert dump_of(restored_db) == dump_of(home / "case.sqlite3")
    assert (target / "database" / "sqlite3.db").is_file()
    blobs = {name: body for name, body in files_under(target).items() if name.startswith("blobs/")}
    assert blobs == files_under(home / "vault") and len(blobs) == 2

    again = manage(embedded, "restore", "--input", str(archive), "--target", str(home / "r2"),
                   "--database-url", f"sqlite:///{restored_db}", check=False)  # fmt: skip
    assert again.returncode == 1 and "is not empty" in again.stderr


def test_command_line_reports_a_damaged_archive_without_a_traceback(embedded):
    home = Path(embedded["HOME_DIR"])
    archive = home / "to-damage.tar.gz"
    manage(embedded, "backup", "--output", str(archive))
    raw = archive.read_bytes()
    archive.write_bytes(raw[: len(raw) // 2])
    result = manage(embedded, "backup", "verify", str(archive), check=False)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "damaged or truncated" in result.stderr


def edit_manifest(edit):
    def transform(name: str, body: bytes) -> bytes:
        return edit(body) if name == "manifest.json" else body

    return transform


def created_at_digit_changed(body: bytes) -> bytes:
    manifest = json.loads(body)
    stamp = manifest["created_at"]
    manifest["created_at"] = stamp[:3] + str((int(stamp[3]) + 1) % 10) + stamp[4:]  # the year's last digit
    return json.dumps(manifest).encode()


def field_renamed(body: bytes) -> bytes:
    return body.replace(b'"service"', b'"sesvice"')


def blob_flipped(name: str, body: bytes) -> bytes:
    return flip_byte(body) if name.startswith("blobs/") else body


def seal_dropped(name: str, body: bytes) -> bytes | None:
    return None if name == "seal.json" else body


def flipped_at(offset: int):
    def damage(raw: bytes) -> bytes:
        return flip_byte(raw, offset % len(raw))

    return damage


GZIP_DAMAGE = {  # a byte of each class of a gzip archive -> the one-line reason
    "header time stamp": (flipped_at(5), "the gzip header is not the one backups write"),
    "header OS byte": (flipped_at(9), "the gzip header is not the one backups write"),
    "trailer CRC-32": (flipped_at(-8), "the gzip trailer's CRC-32 does not match the data"),
    "trailer ISIZE": (flipped_at(-2), r"the gzip trailer's length \(ISIZE\) does not match the data"),
    "bytes appended": (lambda raw: raw + b"\x00junk", "bytes follow the end of the gzip stream"),
    "compressed payload": (flipped_at(-200), "damaged or truncated"),
}
MEMBER_DAMAGE = {  # damage inside the tar, the container written anew -> the one-line reason
    "manifest digit edited": (edit_manifest(created_at_digit_changed), "manifest.json does not match the SHA-256 in seal.json"),
    "manifest field misspelled": (edit_manifest(field_renamed), "manifest.json: unknown field 'sesvice'"),
    "blob byte flipped": (blob_flipped, "member blobs/.* does not match its SHA-256 checksum"),
    "seal removed": (seal_dropped, "seal.json is missing"),
}  # fmt: skip


def refused_in_one_line(embedded, archive: Path, message: str) -> None:
    result = manage(embedded, "backup", "verify", str(archive), "--no-progress", check=False)
    assert result.returncode == 1, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert re.search(message, lines[0]), lines[0]


@pytest.fixture(scope="module")
def sound_archive(embedded) -> Path:
    archive = Path(embedded["HOME_DIR"]) / "sound.tar.gz"
    manage(embedded, "backup", "--output", str(archive))
    return archive


@pytest.mark.parametrize("damage", sorted(GZIP_DAMAGE))
def test_verify_refuses_damage_to_each_byte_of_the_container(embedded, sound_archive, damage):
    change, message = GZIP_DAMAGE[damage]
    damaged = sound_archive.with_name(f"container-{damage.replace(' ', '-')}.tar.gz")
    damaged.write_bytes(change(sound_archive.read_bytes()))
    refused_in_one_line(embedded, damaged, message)


@pytest.mark.parametrize("damage", sorted(MEMBER_DAMAGE))
def test_verify_refuses_damage_to_the_manifest_and_members(embedded, sound_archive, damage):
    transform, message = MEMBER_DAMAGE[damage]
    damaged = sound_archive.with_name(f"member-{damage.replace(' ', '-')}.tar.gz")
    rewrite_archive(sound_archive, damaged, transform)
    refused_in_one_line(embedded, damaged, message)
    if damage == "manifest digit edited":  # restore without --verify checks the seal as well
        target = Path(embedded["HOME_DIR"]) / "restored-edited"
        result = manage(embedded, "restore", "--input", str(damaged), "--target", str(target), check=False)
        assert result.returncode == 1 and "does not match the SHA-256 in seal.json" in result.stderr


@pytest.mark.parametrize(("compression", "suffix"), [("bzip2", "tar.bz2"), ("xz", "tar.xz")])
def test_verify_refuses_damaged_headers_and_trailers_of_bzip2_and_xz(embedded, compression, suffix):
    archive = Path(embedded["HOME_DIR"]) / f"sound.{suffix}"
    manage(embedded, "backup", "--output", str(archive), "--compress", compression)
    assert "OK: backup" in manage(embedded, "backup", "verify", str(archive)).stdout
    for name, offset in (("header", 3), ("trailer", -1), ("before-trailer", -6)):
        damaged = archive.with_name(f"{name}.{suffix}")
        damaged.write_bytes(flipped_at(offset)(archive.read_bytes()))
        refused_in_one_line(embedded, damaged, "damaged|not a backup archive")
