"""A restore leaves a service that answers: the case service started on a database restored into a
new, empty PostgreSQL database answers real authenticated HTTP requests (cases, the audit chain, a
report run) with 200, with no `migrate` in between. The dump is loaded without privileges, so the
restore grants the tenant and report roles their rights again."""

from __future__ import annotations

import io

import httpx
import pytest
from django.core.management import call_command
from django.db import connection

from tests.casemgmt.conftest import PASSWORD
from tests.support.backups import empty_database
from tests.support.processes import start_ready_asgi_server

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("vault_root"),
    pytest.mark.worker,
]


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, "--no-progress", stdout=out)
    return out.getvalue()


def test_the_service_answers_on_a_restored_database(admin_user, make_case, subprocess_env, tmp_path):
    cases = {str(make_case().id) for _ in range(2)}
    archive = tmp_path / "full.tar.gz"
    run("backup", "--output", str(archive))
    with empty_database(connection.settings_dict) as url:
        out = run("restore", "--input", str(archive), "--target", str(tmp_path / "r"), "--database-url", url)
        assert "Granted the service's database roles their rights again" in out and "Warning" not in out
        server, base = start_ready_asgi_server(
            name="case-restored",
            application="casemgmt.config.asgi:application",
            env={**subprocess_env, "CASE_DATABASE_URL": url},
            health_path="/healthz",
        )
        try:
            with httpx.Client(base_url=base, timeout=30) as client:
                login = client.post("/auth/login", json={"email": admin_user.email, "password": PASSWORD})
                assert login.status_code == 200, login.text
                client.headers["Authorization"] = f"Bearer {login.json()['token']}"
                listed = client.get("/cases")
                assert listed.status_code == 200, listed.text
                assert {case["id"] for case in listed.json()["data"]} == cases
                chain = client.get("/audit/verify-chain")
                assert chain.status_code == 200, chain.text
                saved = client.post("/reports", json={"name": "all", "query": "SELECT id FROM cases"})
                assert saved.status_code == 201, saved.text
                ran = client.post(f"/reports/{saved.json()['id']}/run")
                assert ran.status_code == 200, ran.text
                assert {row["id"] for row in ran.json()["data"]} == cases
        finally:
            server.stop()
