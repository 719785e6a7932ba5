"""The orchestrator's OpenAPI document is exact: schemathesis, with every check and its stateful
phase, authenticated as an admin, finds no failure against the service under daphne with security on."""

from __future__ import annotations

import pytest

from tests.orchestrator.security.helpers import jwt_for
from tests.support.openapi_fuzz import run_schemathesis
from tests.support.processes import start_ready_asgi_server

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def service(subprocess_env):
    server, base = start_ready_asgi_server(
        name="orch-asgi-fuzz",
        application="orchestrator.config.asgi:application",
        env={**subprocess_env, "ORCH_SECURITY_ENABLED": "true"},
        health_path="/api/health",
    )
    try:
        yield base
    finally:
        server.stop()


def test_schemathesis_finds_no_failure(service):
    token = jwt_for("admin", subject="fuzz")
    report = run_schemathesis(
        service, name="orch", env={"FUZZ_TOKEN": token}, headers={"Authorization": f"Bearer {token}"}
    )

    assert report.exit_code == 0, f"schemathesis failed (full log: {report.log_path}):\n{report.failures()}"
    assert "Stateful" in report.output  # the stateful phase ran, not only single requests
