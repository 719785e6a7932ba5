"""Per-tenant rate limits on search, exports and report queries: one budget per tenant, 429 in the
error shape with Retry-After, other tenants unaffected, 401/403 before any counting."""

from __future__ import annotations

import pytest


@pytest.fixture
def tight(settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            "tenant-search": "2/min",
            "tenant-export": "1/min",
            "tenant-report-query": "1/min",
        },
    }


@pytest.mark.django_db
def test_search_budget_is_per_tenant_and_shared_by_its_principals(
    tight, tenant, other_tenant, admin_user, make_user, api
):
    colleague = make_user(tenant, permissions=["cases:read"])
    outsider = make_user(other_tenant, permissions=["cases:read"])
    assert api(admin_user).get("/cases/search?q=hail").status_code == 200
    assert api(colleague).get("/cases/search?q=hail").status_code == 200
    refused = api(admin_user).get("/cases/search?q=hail")
    assert refused.status_code == 429
    body = refused.json()
    assert body["error"] is True and body["code"] == "rate_limited"
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert api(colleague).get("/cases/search?q=hail").status_code == 429  # the same tenant's budget
    assert api(outsider).get("/cases/search?q=hail").status_code == 200  # another tenant's budget


@pytest.mark.django_db
def test_unauthenticated_and_unauthorised_callers_are_refused_before_counting(tight, tenant, make_user, api):
    lacking = make_user(tenant, permissions=[])
    for _ in range(3):
        assert api(None).get("/cases/search?q=x").status_code == 401
        assert api(lacking).get("/cases/search?q=x").status_code == 403


@pytest.mark.django_db
def test_audit_export_is_limited(tight, tenant, admin_user, api):
    assert api(admin_user).get("/audit/export").status_code == 200
    refused = api(admin_user).get("/audit/export")
    assert refused.status_code == 429 and refused.json()["code"] == "rate_limited"
    assert refused["Retry-After"]


@pytest.mark.django_db
def test_report_runs_are_limited(tight, tenant, admin_user, api):
    client = api(admin_user)
    report = client.post("/reports", {"name": "n", "query": "SELECT count(*) AS n FROM cases"}, format="json")
    assert report.status_code == 201, report.content
    url = f"/reports/{report.json()['id']}/run"
    assert client.post(url).status_code == 200
    refused = client.post(url)
    assert refused.status_code == 429 and refused["Retry-After"]
    assert client.post("/reports/ask", {"question": "how many?"}, format="json").status_code == 429


def test_default_rates_are_configured(settings):
    rates = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    assert {"tenant-search", "tenant-export", "tenant-report-query"} <= set(rates)
