"""Concurrency claims against real PostgreSQL: each thread has its own database connection."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, transaction

from casemgmt.audit.models import AuditEvent
from casemgmt.audit.services import verify_tenant_chain
from casemgmt.cases.models import Case
from casemgmt.cases.services import case_create, case_type_create, case_update_data
from tests.casemgmt.cases.conftest import VALID_DATA

pytestmark = pytest.mark.django_db(transaction=True)


def run_together(count, call):
    """Runs `call(i)` in `count` threads released at once; returns the results in order."""
    barrier = threading.Barrier(count)

    def worker(index):
        try:
            barrier.wait(timeout=30)
            return call(index)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(worker, range(count)))


def test_20_concurrent_creations_get_20_consecutive_numbers(api, admin_user, case_type):
    def create(_):
        response = api(admin_user).post(
            "/cases", {"caseTypeId": str(case_type.id), "data": VALID_DATA}, format="json"
        )
        return response.status_code, response.json().get("caseNumber")

    results = run_together(20, create)
    assert [status for status, _ in results] == [201] * 20
    numbers = sorted(number for _, number in results)
    assert numbers == [f"IC-{n:06d}" for n in range(1, 21)]
    assert Case.objects.filter(tenant=admin_user.tenant).count() == 20
    assert verify_tenant_chain(tenant_id=admin_user.tenant_id).is_valid


def test_10_concurrent_patches_with_one_version_exactly_one_wins(api, admin_user, make_case):
    case = make_case()

    def update(index):
        response = api(admin_user).patch(
            f"/cases/{case.id}/data",
            {"data": {"description": f"writer {index}"}, "version": 1},
            format="json",
        )
        return response.status_code, response.json()

    results = run_together(10, update)
    statuses = sorted(status for status, _ in results)
    assert statuses == [200] + [409] * 9
    assert all(body["code"] == "version_conflict" for status, body in results if status == 409)
    winner = next(body for status, body in results if status == 200)
    case.refresh_from_db()
    # no lost update: the stored data is the winner's, at version 2, audited once
    assert case.version == 2 and case.data["description"] == winner["data"]["description"]
    assert AuditEvent.objects.filter(resource=f"cases/{case.id}", action="case:updated").count() == 1


def test_concurrent_registrations_of_one_key_get_distinct_versions(api, admin_user):
    def register(index):
        body = {"key": "permit", "displayName": f"Permit {index}", "schema": {"type": "object"}}
        response = api(admin_user).post("/case-types", body, format="json")
        return response.status_code, response.json().get("version")

    results = run_together(5, register)
    assert sorted(results) == [(201, v) for v in range(1, 6)]


class _RolledBack(Exception):
    pass


def test_concurrent_creates_of_two_types_with_rollbacks_and_updates_stay_gap_free_and_fork_free(
    admin_user, case_type, make_case
):
    """Creates of two case types race with case updates (same tenant chain) and with creates that
    roll back after their number and audit row were taken: each type's numbers are 1..n with no gap,
    and the tenant's chain is one unbroken line (no two rows on one sequence, every link holds)."""
    other = case_type_create(user=admin_user, key="permit", display_name="Permit", schema={"type": "object"})
    target = make_case()  # IC-000001

    def act(index):
        kind = index % 4
        if kind == 3:  # a create that fails after its number statement: the rollback gives it back
            try:
                with transaction.atomic():
                    case_create(user=admin_user, case_type=case_type, data=dict(VALID_DATA))
                    raise _RolledBack
            except _RolledBack:
                return None
        if kind == 2:
            case_update_data(
                user=admin_user, case=target, patch={"description": f"w{index}"}, expected_version=None
            )
            return None
        return case_create(
            user=admin_user, case_type=case_type if kind == 0 else other, data=dict(VALID_DATA)
        ).case_number

    numbers = [n for n in run_together(16, act) if n]
    assert sorted(n for n in numbers if n.startswith("IC-")) == [f"IC-{n:06d}" for n in range(2, 6)]
    assert sorted(n for n in numbers if n.startswith("PER-")) == [f"PER-{n:06d}" for n in range(1, 5)]
    sequences = list(
        AuditEvent.objects.filter(chain=str(admin_user.tenant_id)).values_list("sequence", flat=True)
    )
    assert sorted(sequences) == list(range(1, len(sequences) + 1))
    result = verify_tenant_chain(tenant_id=admin_user.tenant_id)
    assert result.is_valid and result.entries_checked == len(sequences), result.errors
