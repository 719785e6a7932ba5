"""Report endpoints: the aggregates, saved-report CRUD and the permission matrix."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from casemgmt.audit.models import AuditEvent
from casemgmt.cases.models import Case
from casemgmt.reports.models import Report

pytestmark = pytest.mark.django_db


def ok(response, status: int = 200):
    assert response.status_code == status, response.content
    return response.json() if response.content else None


# --- aggregates ------------------------------------------------------------------------------


def test_dashboard(api, analyst, world, other_world):
    body = ok(api(analyst).get("/reports/dashboard"))
    assert body == {
        "totalActive": 3,
        "totalClosed": 2,
        "avgResolutionTime": pytest.approx(2 * 3600, abs=1),  # 1 h and 3 h
        "slaComplianceRate": pytest.approx(1 / 3, abs=1e-3),  # on time; late and overdue breached
        "byStatus": {"active": 3, "closed": 2, "cancelled": 1},
        "byType": {world.flow.key: 4, "complaint": 2},
    }


def test_dashboard_of_an_empty_tenant(api, analyst, other_world):
    assert ok(api(analyst).get("/reports/dashboard")) == {
        "totalActive": 0,
        "totalClosed": 0,
        "avgResolutionTime": 0.0,
        "slaComplianceRate": 1.0,
        "byStatus": {"active": 0, "closed": 0, "cancelled": 0},
        "byType": {},
    }


def test_summary_over_the_default_period(api, analyst, world, other_world):
    before = timezone.now()
    body = ok(api(analyst).get("/reports/summary"))
    start, end = body.pop("period").split("/")
    assert end >= before.strftime("%Y-%m-%dT%H:%M:%S") and start < end
    assert body == {
        "totalCases": 6,
        "byStatus": {"active": 3, "closed": 2, "cancelled": 1},
        "avgResolutionTime": pytest.approx(7200, abs=1),
        "slaComplianceRate": pytest.approx(0.3333, abs=1e-4),
    }


def test_summary_of_a_period_and_a_case_type(api, analyst, world):
    client = api(analyst)
    since = (timezone.now() - timedelta(hours=3)).isoformat()
    body = ok(client.get("/reports/summary", {"from": since}))
    # the late claim was created 4 h ago: outside the period
    assert body["totalCases"] == 5 and body["byStatus"] == {"active": 3, "closed": 1, "cancelled": 1}
    assert body["avgResolutionTime"] == pytest.approx(3600, abs=1) and body["slaComplianceRate"] == 0.5
    assert body["period"].startswith(since[:19])
    complaints = ok(client.get("/reports/summary", {"caseType": "complaint"}))
    assert complaints["totalCases"] == 2 and complaints["byStatus"] == {
        "active": 1,
        "closed": 0,
        "cancelled": 1,
    }
    assert complaints["slaComplianceRate"] == 1.0 and complaints["avgResolutionTime"] == 0.0
    type_id = str(world.cases[4].case_type_id)
    assert ok(client.get("/reports/summary", {"caseType": type_id}))["totalCases"] == 2
    assert ok(client.get("/reports/summary", {"caseType": "nothing"}))["totalCases"] == 0
    past = ok(client.get("/reports/summary", {"from": "2020-01-01", "to": "2020-02-01"}))
    assert past["totalCases"] == 0 and past["period"] == "2020-01-01T00:00:00.000Z/2020-02-01T00:00:00.000Z"


@pytest.mark.parametrize(
    "params", [{"from": "yesterday"}, {"to": "2020-13-01"}, {"from": "2020-02-01", "to": "2020-01-01"}]
)
def test_bad_periods_are_400(api, analyst, params):
    for path in ("/reports/summary", "/reports/sla-compliance"):
        response = api(analyst).get(path, params)
        assert response.status_code == 400 and response.json()["code"] == "validation_error"


def test_sla_compliance(api, analyst, world, other_world):
    client = api(analyst)
    overdue_deadline = Case.objects.get(pk=world.cases[3].pk).sla_deadline

    def overdue_bounds(request):
        # The open case's breach grows while the test runs: it is "now - deadline" at query time.
        before = (timezone.now() - overdue_deadline).total_seconds()
        body = ok(request())
        return body, before, (timezone.now() - overdue_deadline).total_seconds()

    body, low, high = overdue_bounds(lambda: client.get("/reports/sla-compliance"))
    assert body["onTimeCount"] == 1 and body["breachedCount"] == 2
    assert body["complianceRate"] == pytest.approx(0.3333, abs=1e-4)
    # late: closed exactly 2 h after its deadline; overdue: about 1 h past it and still open
    assert (7200 + low) / 2 - 0.01 <= body["avgBreachTime"] <= (7200 + high) / 2 + 0.01
    assert low >= 3600 and "/" in body["period"]
    since = (timezone.now() - timedelta(hours=3)).isoformat()
    recent, low, high = overdue_bounds(lambda: client.get("/reports/sla-compliance", {"from": since}))
    assert (recent["onTimeCount"], recent["breachedCount"], recent["complianceRate"]) == (1, 1, 0.5)
    assert low - 0.01 <= recent["avgBreachTime"] <= high + 0.01
    complaints = ok(client.get("/reports/sla-compliance", {"caseType": "complaint"}))
    assert complaints == {
        **complaints,
        "onTimeCount": 0,
        "breachedCount": 0,
        "complianceRate": 1.0,
        "avgBreachTime": 0.0,
    }


# --- saved reports ---------------------------------------------------------------------------


def test_saved_report_crud(api, analyst, tenant):
    client = api(analyst)
    first = ok(
        client.post("/reports", {"name": "By status", "query": "SELECT status FROM cases"}, format="json"),
        201,
    )
    assert set(first) == {"id", "name", "query", "createdBy", "createdAt", "updatedAt"}
    assert first["createdBy"] == str(analyst.id) and first["query"] == "SELECT status FROM cases"
    second = ok(
        client.post("/reports", {"name": "Tasks", "query": "SELECT count(*) FROM tasks"}, format="json"), 201
    )
    assert [r["id"] for r in ok(client.get("/reports"))] == [second["id"], first["id"]]  # newest first
    assert [r["id"] for r in ok(client.get("/reports", {"limit": 1, "offset": 1}))] == [first["id"]]
    assert ok(client.get(f"/reports/{first['id']}")) == first
    changed = ok(
        client.put(
            f"/reports/{first['id']}",
            {"name": "Open", "query": "SELECT id FROM cases WHERE status = 'active'"},
            format="json",
        )
    )
    assert changed["name"] == "Open" and changed["createdAt"] == first["createdAt"]
    assert (
        ok(client.get(f"/reports/{first['id']}"))["query"] == "SELECT id FROM cases WHERE status = 'active'"
    )
    ok(client.delete(f"/reports/{first['id']}"), 204)
    assert client.get(f"/reports/{first['id']}").status_code == 404
    actions = AuditEvent.objects.filter(tenant_id=tenant.id, resource__startswith="reports/").values_list(
        "action", flat=True
    )
    assert sorted(actions) == sorted(["report:created", "report:created", "report:updated", "report:deleted"])


@pytest.mark.parametrize(
    "body",
    [
        {"name": "x"},
        {"query": "SELECT 1"},
        {"name": "", "query": "SELECT 1"},
        {"name": 5, "query": "SELECT 1"},
        {"name": "x", "query": ["SELECT 1"]},
        {"name": "x" * 201, "query": "SELECT 1"},
        {"name": "x", "query": "SELECT 1 " + " " * 20_000},
    ],
)
def test_bad_report_bodies_are_400(api, analyst, body):
    assert api(analyst).post("/reports", body, format="json").status_code == 400
    assert not Report.objects.exists()


def test_a_refused_query_is_not_saved_or_changed(api, analyst):
    client = api(analyst)
    report = ok(client.post("/reports", {"name": "x", "query": "SELECT 1"}, format="json"), 201)
    response = client.put(
        f"/reports/{report['id']}", {"name": "y", "query": "DELETE FROM cases"}, format="json"
    )
    assert response.status_code == 400 and response.json()["code"] == "validation_error"
    assert response.json()["message"].startswith("Query refused: only SELECT")
    assert ok(client.get(f"/reports/{report['id']}"))["query"] == "SELECT 1"


@pytest.mark.parametrize("params", [{"limit": 0}, {"limit": 501}, {"offset": -1}, {"limit": "x"}])
def test_list_bounds_are_400(api, analyst, params):
    assert api(analyst).get("/reports", params).status_code == 400


def test_a_run_is_audited(api, analyst, tenant, world):
    client = api(analyst)
    report = ok(client.post("/reports", {"name": "n", "query": "SELECT id FROM cases"}, format="json"), 201)
    body = ok(client.post(f"/reports/{report['id']}/run"))
    assert body["reportId"] == report["id"] and body["rowCount"] == 6 and len(body["data"]) == 6
    assert body["executedAt"].endswith("Z")
    event = AuditEvent.objects.get(tenant_id=tenant.id, action="report:run")
    assert event.resource == f"reports/{report['id']}" and event.actor == str(analyst.id)


# --- permissions -----------------------------------------------------------------------------


def endpoints(report_id: str) -> list[tuple[str, str, dict | None, int]]:
    """(method, path, body, owner's status); without a language model `ask` answers 503."""
    body = {"name": "n", "query": "SELECT 1"}
    return [
        ("get", "/reports/dashboard", None, 200),
        ("get", "/reports/summary", None, 200),
        ("get", "/reports/sla-compliance", None, 200),
        ("post", "/reports/ask", {"question": "how many cases?"}, 503),
        ("get", "/reports", None, 200),
        ("post", "/reports", body, 201),
        ("get", f"/reports/{report_id}", None, 200),
        ("put", f"/reports/{report_id}", body, 200),
        ("post", f"/reports/{report_id}/run", None, 200),
        ("delete", f"/reports/{report_id}", None, 204),
    ]


def call(client, method: str, path: str, body: dict | None):
    return getattr(client, method)(path, body, format="json") if body else getattr(client, method)(path)


def test_permission_matrix(api, analyst, lacking, outsider, make_user, tenant, settings):
    settings.LLM_BASE_URL = ""
    report = ok(api(analyst).post("/reports", {"name": "n", "query": "SELECT 1"}, format="json"), 201)
    by_role = make_user(tenant, roles=["viewer"])  # the seeded Viewer role lacks reports:read
    for method, path, body, owner_status in endpoints(report["id"]):
        assert call(api(None), method, path, body).status_code == 401, path
        assert call(api(lacking), method, path, body).status_code == 403, path
        assert call(api(by_role), method, path, body).status_code == 403, path
        foreign = call(api(outsider), method, path, body)
        if report["id"] in path:
            assert foreign.status_code == 404, path
        response = call(api(analyst), method, path, body)
        assert response.status_code == owner_status, (path, response.content)
    assert Report.objects.filter(tenant=tenant).count() == 1  # one created by the matrix, one deleted


def test_another_tenants_aggregates_and_lists_show_nothing_of_ours(api, outsider, world):
    client = api(outsider)
    assert ok(client.get("/reports/dashboard"))["totalActive"] == 0
    assert ok(client.get("/reports/summary"))["totalCases"] == 0
    assert ok(client.get("/reports/sla-compliance"))["breachedCount"] == 0
    ok(api(world.admin).post("/reports", {"name": "mine", "query": "SELECT 1"}, format="json"), 201)
    assert ok(client.get("/reports")) == []


def test_unknown_report_is_404(api, analyst):
    assert api(analyst).get(f"/reports/{uuid.uuid4()}").status_code == 404
    assert api(analyst).post(f"/reports/{uuid.uuid4()}/run").status_code == 404


def test_documented_fields_match_real_responses(api, analyst, world):
    components = ok(api(None).get("/openapi.json"))["components"]["schemas"]

    def documented(name: str) -> set[str]:
        return set(components[name]["properties"])

    client = api(analyst)
    assert set(ok(client.get("/reports/dashboard"))) == documented("ReportDashboardOut")
    assert set(ok(client.get("/reports/summary"))) == documented("ReportSummaryOut")
    assert set(ok(client.get("/reports/sla-compliance"))) == documented("SlaComplianceOut")
    report = ok(client.post("/reports", {"name": "n", "query": "SELECT 1 AS one"}, format="json"), 201)
    assert set(report) == documented("ReportOut")
    assert set(ok(client.post(f"/reports/{report['id']}/run"))) == documented("ReportRunOut")
    assert {"question", "query", "result", "truncated"} == documented("AnswerOut")
