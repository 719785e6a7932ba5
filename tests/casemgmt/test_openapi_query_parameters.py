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


@pytest.mark.parametrize(
    "url",
    [
        "/audit?from=2020-01-01T00:00:00-16:42",  # a valid ISO 8601 offset PostgreSQL refuses
        "/audit?to=9999-12-31",  # a bare end date covers its day: there is no next midnight
        "/audit?from=0001-01-01T00:00:00%2B05:00",  # before year 1 once in UTC
        "/reports/summary?to=0001-01-05",  # the default 30 days before it precede year 1
        "/cases?createdAfter=9999-12-31T23:59:59-23:59",  # after year 9999 once in UTC
    ],
)
def test_timestamps_at_the_edges_of_iso_8601_are_accepted(api, admin_user, url):
    response = api(admin_user).get(url)
    assert response.status_code == 200, response.content
