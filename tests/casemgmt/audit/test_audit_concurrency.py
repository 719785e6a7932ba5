"""8 concurrent writers to one tenant chain (separate connections): the chain stays linear."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from casemgmt.audit.models import AuditEvent

pytestmark = pytest.mark.django_db(transaction=True)


def test_8_concurrent_writers_keep_the_chain_valid(api, admin_user, make_case):
    cases = [make_case() for _ in range(8)]
    barrier = threading.Barrier(8)

    def writer(index):
        try:
            barrier.wait(timeout=30)
            client = api(admin_user)
            statuses = []
            for step in range(3):
                response = client.patch(
                    f"/cases/{cases[index].id}/data", {"data": {"amount": step + 10}}, format="json"
                )
                statuses.append(response.status_code)
            return statuses
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(writer, range(8)))
    assert results == [[200, 200, 200]] * 8
    chain = list(AuditEvent.objects.filter(chain=str(admin_user.tenant_id)).order_by("sequence"))
    assert [e.sequence for e in chain] == list(range(1, len(chain) + 1))
    assert sum(e.action == "case:updated" for e in chain) == 24
    report = api(admin_user).get("/audit/verify-chain").json()
    assert report["status"] == "valid" and report["entries_checked"] == len(chain)
