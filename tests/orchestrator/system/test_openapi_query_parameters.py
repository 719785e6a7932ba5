"""Every query parameter an orchestrator view reads is declared in the OpenAPI document, and one no
route declares is ignored (tests/support/openapi_params.py). Security on, as an admin."""

from __future__ import annotations

import pytest

from tests.orchestrator.security.helpers import bearer
from tests.support.openapi_params import undeclared_reads

pytestmark = pytest.mark.django_db


def test_views_read_only_declared_query_parameters(api, settings):
    settings.ORCH_SECURITY_ENABLED = True
    api.credentials(**bearer("admin"))
    schema = api.get("/openapi.json").json()
    found = undeclared_reads(api, schema, path_values={})
    assert found["checked"] >= 15
    assert found["problems"] == {}, "\n".join(f"{k}: {v}" for k, v in found["problems"].items())
