"""GET /audit, GET /audit/verify-chain, GET /audit/export (admin:audit)."""

import csv
import io
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from casemgmt.audit.models import AuditEvent
from casemgmt.audit.services import record

pytestmark = pytest.mark.django_db


@pytest.fixture
def auditor(tenant, make_user):
    return make_user(tenant, permissions=["admin:audit"])


@pytest.fixture
def trail(tenant, admin_user, make_case):
    make_case()
    make_case()
    record(tenant_id=tenant.id, actor="robot", action="connector:tested", resource="connectors/http")
    return AuditEvent.objects.filter(chain=str(tenant.id))


def test_list_filters_and_shape(api, auditor, admin_user, trail):
    client = api(auditor)
    body = client.get("/audit").json()
    assert body["total"] == trail.count() and set(body) == {"data", "total", "next"}
    assert body["data"][0]["action"] == "connector:tested"  # newest first
    assert set(body["data"][0]) == {
        "id",
        "timestamp",
        "actor",
        "action",
        "resource",
        "changes",
        "hash",
        "previousHash",
    }
    assert {e["actor"] for e in client.get("/audit?actor=robot").json()["data"]} == {"robot"}
    created = client.get("/audit?action=case:created").json()
    assert created["total"] == 2 and {e["action"] for e in created["data"]} == {"case:created"}
    one = created["data"][0]["resource"]
    assert client.get(f"/audit?resource={one}").json()["total"] == 1
    assert client.get("/audit?resource=cases/*").json()["total"] == 2
    future = (timezone.now() + timedelta(days=1)).strftime("%Y-%m-%d")
    assert client.get(f"/audit?from={future}").json()["total"] == 0
    assert client.get(f"/audit?to={future}").json()["total"] == body["total"]
    paged = client.get("/audit?limit=1&offset=1").json()
    assert (
        len(paged["data"]) == 1
        and paged["data"][0]["id"] == body["data"][1]["id"]
        and "offset=2" in paged["next"]
    )


@pytest.mark.parametrize(
    "query", ["from=not-a-date", "limit=501", "limit=0", "offset=-2", "from=2026-02-02&to=2026-01-01"]
)
def test_list_bad_parameters_are_400(api, auditor, query):
    assert api(auditor).get(f"/audit?{query}").status_code == 400


def test_verify_chain_reports_the_whole_chain_and_records_itself(api, auditor, tenant, trail):
    count = trail.count()
    body = api(auditor).get("/audit/verify-chain").json()
    assert body["status"] == "valid" and body["entries_checked"] == count and body["redacted_entries"] == 0
    assert body["first_entry"]["sequence"] == 1 and body["last_entry"]["sequence"] == count
    assert body["errors"] == [] and body["first_invalid_entry"] is None
    last = AuditEvent.objects.filter(chain=str(tenant.id)).order_by("-sequence").first()
    assert last.action == "audit:verified" and last.resource == "audit/chain"


def test_export_streams_a_date_range_and_records_the_export(api, auditor, trail, tenant):
    today = timezone.now().strftime("%Y-%m-%d")
    count = trail.count()
    response = api(auditor).get(f"/audit/export?format=json&start_date={today}&end_date={today}")
    assert response.status_code == 200 and response.streaming
    exported = json.loads(b"".join(response.streaming_content))
    # the export is recorded before streaming, so it is part of what it exports
    assert len(exported) == count + 1 and exported[-1]["action"] == "audit:exported"
    yesterday = (timezone.now() - timedelta(days=1)).strftime("%Y-%m-%d")
    as_csv = api(auditor).get(f"/audit/export?format=csv&end_date={yesterday}")
    assert list(csv.reader(io.StringIO(b"".join(as_csv.streaming_content).decode()))) == [
        ["id", "timestamp", "actor", "action", "resource", "changes", "hash", "previousHash"]
    ]
    assert AuditEvent.objects.filter(chain=str(tenant.id), action="audit:exported").count() == 2
    assert api(auditor).get("/audit/export?format=pdf").status_code == 400
    assert api(auditor).get("/audit/export?start_date=yesterday").status_code == 400


@pytest.mark.parametrize("url", ["/audit", "/audit/verify-chain", "/audit/export"])
def test_admin_audit_permissions_and_tenancy(api, make_user, tenant, other_tenant, trail, url):
    assert api(make_user(tenant, permissions=["audit:read", "cases:read"])).get(url).status_code == 403
    assert api(None).get(url).status_code == 401
    foreign = make_user(other_tenant, permissions=["admin:audit"])
    if url == "/audit":  # another tenant sees only its own chain
        body = api(foreign).get(url).json()
        assert all(e["actor"] != "robot" for e in body["data"])
