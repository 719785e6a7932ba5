"""Backup and restore of the orchestrator's database on PostgreSQL (it keeps no files outside it)."""

from __future__ import annotations

import io
import json
import tarfile

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from orchestrator.definitions.models import TaskDefinition
from orchestrator.definitions.services import dag_put, task_definition_put
from tests.support.backups import empty_database, rewrite_archive, table_digests, url_of

pytestmark = pytest.mark.django_db(transaction=True)


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, "--no-progress", stdout=out)
    return out.getvalue()


@pytest.fixture
def definitions():
    for task_id, dependencies in (("extract", []), ("transform", ["extract"]), ("load", ["transform"])):
        task_definition_put(
            task_id=task_id, name="", description="", command=f"echo {task_id}",
            dependencies=dependencies, parameters={"LEVEL": "1"}, queue="",
        )  # fmt: skip
    dag_put(
        dag_id="nightly", name="Nightly", description="", tasks=[{"id": "load"}], context=None, tags=["etl"]
    )


def test_round_trip_restores_an_equal_database(definitions, tmp_path):
    archive = tmp_path / "orch.tar.xz"
    out = run("backup", "--output", str(archive), "--compress", "xz", "--verify")
    assert "0 of 0 blob(s) held" in out and "Verified" in out
    assert "OK: backup" in run("backup", "verify", str(archive))
    with tarfile.open(archive) as tar:
        assert tar.getnames() == ["manifest.json", "metadata.json", "database/postgresql.dump", "seal.json"]
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
        restored = table_digests(url)
    source = table_digests(url_of(connection.settings_dict))
    assert restored == source and restored[TaskDefinition._meta.db_table][0] == 3


def test_restore_refuses_another_services_archive(definitions, tmp_path):
    archive, renamed = tmp_path / "orch.tar.gz", tmp_path / "relabelled.tar.gz"
    run("backup", "--output", str(archive))

    def relabel(name: str, body: bytes) -> bytes:
        if name != "manifest.json":
            return body
        return json.dumps({**json.loads(body), "service": "casemgmt"}).encode()

    rewrite_archive(archive, renamed, relabel)
    with pytest.raises(CommandError, match="is a casemgmt backup"):
        run("restore", "--input", str(renamed), "--target", str(tmp_path / "restored"))
    assert not (tmp_path / "restored").exists()


def test_archive_names_its_encryption_keys_without_holding_them(definitions, settings, tmp_path):
    archive = tmp_path / "orch.tar.gz"
    run("backup", "--output", str(archive))
    with tarfile.open(archive) as tar:
        raw = b"".join(tar.extractfile(name).read() for name in tar.getnames())  # type: ignore[union-attr]
    assert all(key.encode() not in raw for key in settings.FIELD_ENCRYPTION_KEYS)
    assert "holds all 1 the backup was taken with" in run("backup", "verify", str(archive))

    settings.FIELD_ENCRYPTION_KEYS = ["b3RoZXIta2V5LW90aGVyLWtleS1vdGhlci1rZXktMzI="]
    out = run("restore", "--input", str(archive), "--target", str(tmp_path / "restored"), "--dry-run")
    assert "lacks encryption keys the backup was taken with" in out
    assert "the database is NOT restored" in out and "ORCH_RESTORE_DATABASE_URL" in out


def test_verify_refuses_a_damaged_trailer_or_an_edited_manifest(definitions, tmp_path):
    archive, edited = tmp_path / "orch.tar.gz", tmp_path / "edited.tar.gz"
    run("backup", "--output", str(archive))
    raw = archive.read_bytes()
    crc = tmp_path / "crc.tar.gz"
    crc.write_bytes(raw[:-8] + bytes([raw[-8] ^ 0xFF]) + raw[-7:])
    with pytest.raises(CommandError, match="the gzip trailer's CRC-32 does not match the data"):
        run("backup", "verify", str(crc))

    def later(name: str, body: bytes) -> bytes:
        return body.replace(b'"created_at": "2', b'"created_at": "3') if name == "manifest.json" else body

    rewrite_archive(archive, edited, later)
    with pytest.raises(CommandError, match="manifest.json does not match the SHA-256 in seal.json") as caught:
        run("backup", "verify", str(edited))
    assert "\n" not in str(caught.value)
