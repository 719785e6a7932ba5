"""The embedded configuration (SQLite, filesystem vault) backs up with SQLite's online backup API and
restores to an identical database file; the real command line reports a damaged archive in one line,
with a non-zero exit and no traceback. Runs `manage_case.py` as a child process, as an operator would."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.backups import files_under
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
