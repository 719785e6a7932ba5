"""GET /cases/{id}/events, POST .../events/verify, GET .../events/export."""

import csv
import io
import json

import pytest
from django.db import connection, transaction

from casemgmt.audit.models import AuditEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def auditor(tenant, make_user):
    return make_user(tenant, permissions=["cases:read", "audit:read"])


@pytest.fixture
def case_with_history(api, admin_user, make_case):
    case = make_case()
    client = api(admin_user)
    for amount in (1, 2, 3):
        assert (
            client.patch(f"/cases/{case.id}/data", {"data": {"amount": amount}}, format="json").status_code
            == 200
        )
    assert client.post(f"/cases/{case.id}/close", {"reason": "done"}, format="json").status_code == 200
    make_case()  # another case's events interleave in the same tenant chain
    return case


def tamper(event_id, changes):
    """Rewrites a stored event behind the append-only trigger's back (replica role skips triggers)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(
            "UPDATE audit_auditevent SET changes = %s WHERE id = %s", [json.dumps(changes), str(event_id)]
        )
        cursor.execute("SET LOCAL session_replication_role = origin")


def test_events_list_fields_order_and_paging(api, auditor, case_with_history):
    response = api(auditor).get(f"/cases/{case_with_history.id}/events")
    assert response.status_code == 200
    body = response.json()
    assert body["total"] == 5 and body["next"] is None
    # Newest first.
    assert [e["action"] for e in body["data"]] == ["case:closed"] + ["case:updated"] * 3 + ["case:created"]
    event = body["data"][3]
    assert set(event) == {"id", "timestamp", "actor", "action", "resource", "changes", "hash", "previousHash"}
    assert event["resource"] == f"cases/{case_with_history.id}" and event["hash"].startswith("sha256:")
    assert event["changes"] == {"before": {"amount": 120}, "after": {"amount": 1}, "version": 2}
    page = api(auditor).get(f"/cases/{case_with_history.id}/events?limit=2&offset=1").json()
    assert [e["id"] for e in page["data"]] == [e["id"] for e in body["data"][1:3]] and "offset=3" in page[
        "next"
    ]
    assert api(auditor).get(f"/cases/{case_with_history.id}/events?limit=501").status_code == 400


def test_events_need_cases_read_and_audit_read(api, make_user, tenant, outsider, case_with_history):
    url = f"/cases/{case_with_history.id}/events"
    assert api(make_user(tenant, permissions=["cases:read"])).get(url).status_code == 403
    assert api(make_user(tenant, permissions=["audit:read"])).get(url).status_code == 403
    assert api(outsider).get(url).status_code == 404
    assert api(None).get(url).status_code == 401


def test_verify_valid_case_trail(api, auditor, case_with_history):
    response = api(auditor).post(f"/cases/{case_with_history.id}/events/verify")
    assert response.status_code == 200
    body = response.json()
    assert body["isValid"] is True and body["errors"] == [] and body["entriesChecked"] == 5
    assert body["lastVerifiedAt"].endswith("Z") and body["firstInvalidEntry"] is None
    assert AuditEvent.objects.filter(
        action="audit:verified", resource=f"audit/cases/{case_with_history.id}"
    ).exists()


def test_tampering_is_reported_at_that_event_by_both_verify_endpoints(
    api, admin_user, auditor, case_with_history
):
    target = AuditEvent.objects.filter(
        resource=f"cases/{case_with_history.id}", action="case:updated"
    ).order_by("sequence")[1]
    tamper(target.id, {"before": {"amount": 1}, "after": {"amount": 999}, "version": 3})

    case_report = api(auditor).post(f"/cases/{case_with_history.id}/events/verify").json()
    assert case_report["isValid"] is False and case_report["firstInvalidEntry"] == str(target.id)
    assert len(case_report["errors"]) == 1 and str(target.id) in case_report["errors"][0]
    assert "hash does not match" in case_report["errors"][0]

    chain_report = api(admin_user).get("/audit/verify-chain").json()
    assert chain_report["status"] == "invalid"
    assert chain_report["first_invalid_entry"]["id"] == str(target.id)
    assert str(target.id) in chain_report["errors"][0]


def test_verify_permissions(api, make_user, tenant, outsider, case_with_history):
    url = f"/cases/{case_with_history.id}/events/verify"
    assert (
        api(make_user(tenant, permissions=["audit:read"])).post(url).status_code == 200
    )  # audit:read alone is enough
    assert api(make_user(tenant, permissions=["cases:read"])).post(url).status_code == 403
    assert api(outsider).post(url).status_code == 404
    assert api(None).post(url).status_code == 401


def content(response):
    return b"".join(response.streaming_content).decode()


def test_export_json_and_csv_are_streamed(api, auditor, case_with_history):
    client = api(auditor)
    as_json = client.get(f"/cases/{case_with_history.id}/events/export?format=json")
    assert as_json.status_code == 200 and as_json.streaming
    assert as_json["Content-Type"] == "application/json"
    assert f"case-{case_with_history.case_number}-events.json" in as_json["Content-Disposition"]
    events = json.loads(content(as_json))
    assert [e["action"] for e in events][0] == "case:created" and len(events) == 5
    as_csv = client.get(f"/cases/{case_with_history.id}/events/export?format=csv")
    assert as_csv["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(content(as_csv))))
    assert rows[0] == ["id", "timestamp", "actor", "action", "resource", "changes", "hash", "previousHash"]
    assert len(rows) == 6 and rows[1][0] == events[0]["id"]
    assert (
        AuditEvent.objects.filter(
            action="audit:exported", resource=f"audit/cases/{case_with_history.id}"
        ).count()
        == 2
    )


def test_export_bad_format_and_permissions(api, auditor, make_user, tenant, outsider, case_with_history):
    url = f"/cases/{case_with_history.id}/events/export"
    assert api(auditor).get(f"{url}?format=xml").status_code == 400
    assert api(auditor).get(f"{url}?format=").status_code == 400  # only an absent format means json
    assert api(make_user(tenant, permissions=["cases:read"])).get(url).status_code == 403
    assert api(outsider).get(url).status_code == 404
    assert api(None).get(url).status_code == 401
