"""The service running as an ordinary database user (no superuser, no CREATEROLE), as in a managed
PostgreSQL: migrations still apply, report queries answer 503 until an administrator grants the
report role to the service's user, then they run."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[3]

PROBE = """
import uuid, django
django.setup()
from casemgmt.reports.sandbox import run_readonly
from casemgmt.accounts.tenants import tenant_create
from shared.api.errors import ApplicationError
tenant = tenant_create(name=f"T {uuid.uuid4().hex[:8]}", admin_email=f"a{uuid.uuid4().hex[:8]}@t.test",
                       admin_password="correct-horse-battery-staple-42")
try:
    print("rows", run_readonly(tenant_id=tenant.id, sql="SELECT count(*) AS n FROM cases").rows)
except ApplicationError as exc:
    print("error", exc.status_code, exc.code)
"""


def admin_connection() -> psycopg.Connection:
    db = settings.DATABASES["default"]
    return psycopg.connect(
        host=db.get("HOST") or "127.0.0.1", port=db.get("PORT") or 5432, user=db.get("USER") or "postgres",
        dbname="postgres", autocommit=True,
    )  # fmt: skip


@pytest.fixture
def service_database() -> Iterator[tuple[str, str]]:
    name = f"h_reports_{uuid.uuid4().hex[:10]}"
    with admin_connection() as conn:
        conn.execute(f"CREATE ROLE {name} LOGIN NOSUPERUSER NOCREATEROLE")
        conn.execute(f"CREATE DATABASE {name} OWNER {name}")
    db = settings.DATABASES["default"]
    url = f"postgres://{name}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{name}"
    try:
        yield name, url
    finally:
        with admin_connection() as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            conn.execute(f"DROP ROLE IF EXISTS {name}")


def manage(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "casemgmt.config.settings.test", "CASE_DATABASE_URL": url}
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_an_ordinary_database_user_needs_the_role_granted_once(service_database):
    user, url = service_database
    migrated = manage(url, "manage_case.py", "migrate", "-v0")
    assert migrated.returncode == 0, migrated.stderr
    with admin_connection() as conn:  # the role is cluster-wide: ensure it exists without this user
        conn.execute(
            "DO $$ BEGIN CREATE ROLE casemgmt_report_reader NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$"
        )
    before = manage(url, "-c", PROBE)
    assert before.stdout.split() == ["error", "503", "not_configured"], before.stderr
    with admin_connection() as conn:  # the documented one-time grant
        conn.execute(f"GRANT casemgmt_report_reader TO {user}")
    after = manage(url, "-c", PROBE)
    assert after.stdout.strip() == "rows [{'n': 0}]", after.stderr
