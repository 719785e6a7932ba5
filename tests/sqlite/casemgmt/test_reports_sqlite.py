"""Reports on SQLite, as `make run` has them: the aggregates and saved-report CRUD work (report
queries and questions: test_report_queries_sqlite.py)."""

from __future__ import annotations

import pytest

from tests.casemgmt.reports.conftest import analyst, world  # noqa: F401

pytestmark = pytest.mark.django_db


def test_aggregates_on_sqlite(api, analyst, world):  # noqa: F811
    client = api(analyst)
    dashboard = client.get("/reports/dashboard").json()
    assert dashboard["byStatus"] == {"active": 3, "closed": 2, "cancelled": 1}
    assert dashboard["avgResolutionTime"] == pytest.approx(7200, abs=1)
    summary = client.get("/reports/summary", {"caseType": world.flow.key}).json()
    assert summary["totalCases"] == 4 and summary["slaComplianceRate"] == pytest.approx(0.3333, abs=1e-4)
    sla = client.get("/reports/sla-compliance").json()
    assert (sla["onTimeCount"], sla["breachedCount"]) == (1, 2)
    assert sla["avgBreachTime"] == pytest.approx(5400, abs=5)


def test_saved_reports_are_checked_and_run_on_sqlite(api, analyst):  # noqa: F811
    client = api(analyst)
    assert (
        client.post("/reports", {"name": "x", "query": "DELETE FROM cases"}, format="json").status_code == 400
    )
    report = client.post("/reports", {"name": "x", "query": "SELECT count(*) FROM cases"}, format="json")
    assert report.status_code == 201
    response = client.post(f"/reports/{report.json()['id']}/run")
    assert response.status_code == 200, response.json()
    assert response.json()["data"] == [{"count": 0}]  # the report connection sees committed rows only
