"""The case service's OpenAPI document is exact: schemathesis, with every check and its stateful
phase, authenticated as a tenant's admin, finds no failure against the service as deployed:
deploy/Procfile's case-web command (uvicorn with its workers), only the port changed."""

from __future__ import annotations

import uuid

import httpx
import pytest

from casemgmt.accounts.tenants import tenant_create
from tests.casemgmt.conftest import PASSWORD
from tests.support.openapi_fuzz import run_schemathesis
from tests.support.processes import start_procfile_server

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def fuzzed_web(subprocess_env):
    """The Procfile's case-web, with the per-IP login lockout out of reach: fuzzing /auth/login
    from one address fails logins by the hundred, and the lockout (doing its job) would then refuse
    the fresh logins the run needs for /auth/logout. The per-email lockout stays as configured."""
    env = {**subprocess_env, "CASE_AUTH_LOCKOUT_IP_FAILURES": "1000000"}
    server, base = start_procfile_server("case-web", env=env, health_path="/healthz")
    try:
        yield base
    finally:
        server.stop()


def test_schemathesis_finds_no_failure(fuzzed_web):
    production_web = fuzzed_web
    email = f"fuzz-{uuid.uuid4().hex[:8]}@fuzz.test"
    tenant_create(name=f"Fuzz {uuid.uuid4().hex[:8]}", admin_email=email, admin_password=PASSWORD)
    login = httpx.post(
        f"{production_web}/auth/login", json={"email": email, "password": PASSWORD}, timeout=30
    )
    assert login.status_code == 200, login.text

    report = run_schemathesis(
        production_web,
        name="case",
        env={"FUZZ_TOKEN": login.json()["token"], "FUZZ_LOGIN_EMAIL": email, "FUZZ_LOGIN_PASSWORD": PASSWORD},
    )

    assert report.exit_code == 0, f"schemathesis failed (full log: {report.log_path}):\n{report.failures()}"
    assert "Stateful" in report.output  # the stateful phase ran, not only single requests


def test_a_multipart_body_of_the_closing_boundary_alone_is_the_json_400(production_web):
    """Under daphne this body got a bare 400 from the server's own multipart parsing, outside the
    document; the production server hands it to the application, which answers its error body."""
    email = f"multipart-{uuid.uuid4().hex[:8]}@fuzz.test"
    tenant_create(name=f"Multipart {uuid.uuid4().hex[:8]}", admin_email=email, admin_password=PASSWORD)
    login = httpx.post(
        f"{production_web}/auth/login", json={"email": email, "password": PASSWORD}, timeout=30
    )
    response = httpx.post(
        f"{production_web}/vault/upload",
        content=b"--boundary--\r\n",
        headers={
            "Authorization": f"Bearer {login.json()['token']}",
            "Content-Type": "multipart/form-data; boundary=boundary",
        },
        timeout=30,
    )
    assert response.status_code == 400, response.text
    assert response.json()["error"] is True
