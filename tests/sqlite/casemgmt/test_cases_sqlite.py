"""Cases on SQLite, as `make run` does it: numbering and versioning without row locks (SQLite's
immediate transactions admit one writer at a time), optimistic concurrency on data and the
dashboard's week arithmetic."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from casemgmt.audit.models import AuditEvent
from casemgmt.audit.services import verify_tenant_chain
from casemgmt.cases.models import Case
from casemgmt.cases.services import case_close
from tests.casemgmt.cases.conftest import VALID_DATA


def run_together(count, call):
    """Runs `call(i)` in `count` threads released at once, each on its own database connection."""
    barrier = threading.Barrier(count)

    def worker(index):
        try:
            barrier.wait(timeout=30)
            return call(index)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(worker, range(count)))


# --- numbering and versions under concurrency ---------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_concurrent_creations_get_consecutive_numbers(api, admin_user, case_type):
    def create(_):
        response = api(admin_user).post(
            "/cases", {"caseTypeId": str(case_type.id), "data": VALID_DATA}, format="json"
        )
        return response.status_code, response.json().get("caseNumber")

    results = run_together(12, create)
    assert [status for status, _ in results] == [201] * 12
    assert sorted(number for _, number in results) == [f"IC-{n:06d}" for n in range(1, 13)]
    assert Case.objects.filter(tenant=admin_user.tenant).count() == 12
    assert verify_tenant_chain(tenant_id=admin_user.tenant_id).is_valid


@pytest.mark.django_db(transaction=True)
def test_concurrent_patches_with_one_version_exactly_one_wins(api, admin_user, make_case):
    case = make_case()

    def update(index):
        body = {"data": {"description": f"writer {index}"}, "version": 1}
        response = api(admin_user).patch(f"/cases/{case.id}/data", body, format="json")
        return response.status_code, response.json()

    results = run_together(8, update)
    assert sorted(status for status, _ in results) == [200] + [409] * 7
    winner = next(body for status, body in results if status == 200)
    case.refresh_from_db()
    assert case.version == 2 and case.data["description"] == winner["data"]["description"]
    assert AuditEvent.objects.filter(resource=f"cases/{case.id}", action="case:updated").count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_registrations_of_one_key_get_distinct_versions(api, admin_user):
    def register(index):
        body = {"key": "permit", "displayName": f"Permit {index}", "schema": {"type": "object"}}
        response = api(admin_user).post("/case-types", body, format="json")
        return response.status_code, response.json().get("version")

    assert sorted(run_together(5, register)) == [(201, v) for v in range(1, 6)]


# --- dashboard --------------------------------------------------------------------------------


@pytest.mark.django_db
def test_dashboard_ages_active_cases_by_whole_weeks_and_averages_resolution(api, admin_user, make_case):
    now = timezone.now()
    for age in (
        timedelta(hours=1),
        timedelta(days=6, hours=23),
        timedelta(days=7, hours=1),
        timedelta(days=22),
    ):
        case = make_case()
        Case.objects.filter(pk=case.pk).update(created_at=now - age)
    for hours in (1, 3):  # resolved in one hour and in three
        case = case_close(user=admin_user, case=make_case())
        Case.objects.filter(pk=case.pk).update(
            created_at=now - timedelta(hours=hours + 1), closed_at=now - timedelta(hours=1)
        )
    body = api(admin_user).get("/cases/dashboard").json()
    assert body["ageingByWeek"] == [
        {"week": 0, "count": 2},
        {"week": 1, "count": 1},
        {"week": 2, "count": 0},
        {"week": 3, "count": 1},
    ]
    assert body["totalActive"] == 4 and body["totalClosed"] == 2
    assert body["avgResolutionTime"] == pytest.approx(2 * 3600, abs=1)


@pytest.mark.django_db
@pytest.mark.parametrize("number", [-0.0, 1.7976931348623157e308, 123456789012345678901234567890.5])
def test_case_data_numbers_keep_the_audit_chain_valid(api, admin_user, make_case, number):
    case = make_case()
    client = api(admin_user)
    response = client.patch(f"/cases/{case.id}/data", {"data": {"y": number}}, format="json")
    assert response.status_code == 200, response.content
    verified = client.post(f"/cases/{case.id}/events/verify")
    assert verified.status_code == 200 and verified.json()["isValid"] is True, verified.content
    chain = client.get("/audit/verify-chain")
    assert chain.status_code == 200 and chain.json()["status"] == "valid", chain.content
