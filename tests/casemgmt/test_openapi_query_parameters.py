"""Every query parameter a case-service view reads is declared in the OpenAPI document, and one no
route declares is ignored (tests/support/openapi_params.py)."""

from __future__ import annotations

import pytest

from tests.casemgmt.cases.conftest import case_type, make_case  # noqa: F401 - fixtures reused here
from tests.support.openapi_params import undeclared_reads

pytestmark = pytest.mark.django_db


def test_views_read_only_declared_query_parameters(api, admin_user, make_case):  # noqa: F811
    case = make_case()
    client = api(admin_user)
    schema = client.get("/openapi.json").json()
    found = undeclared_reads(
        client, schema, path_values={"case_id": str(case.id), "tenant_id": str(admin_user.tenant_id)}
    )
    assert found["checked"] >= 30
    assert found["problems"] == {}, "\n".join(f"{k}: {v}" for k, v in found["problems"].items())
