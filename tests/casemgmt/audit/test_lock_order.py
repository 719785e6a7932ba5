"""Every write that appends to a tenant's audit chain, mixed, from real threads against PostgreSQL.

Tenant-settings, branding and theme writes lock the tenant row; every audit append ends with a
foreign-key check on that row; case PATCHes lock a case row, task claims a case and a step row,
case creates a case-number counter. With one lock order everywhere none of them can deadlock, so
every request answers 2xx (a deadlock would be a 503 `deadlock detected`) and the chain verifies.
"""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from casemgmt.audit.models import AuditEvent
from tests.casemgmt.workflows.conftest import Flow, ok, task_step

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 4
OPERATIONS = 40  # per thread


def _operations(client, flow: Flow, index: int):
    """The thread's mix, one write of each kind in turn; each returns the response."""
    own_case = flow.case()
    created = [flow.case()]

    def settings(step):
        return client.put("/tenant/settings", {"defaultSlaHours": 24 + index * 100 + step}, format="json")

    def branding(step):
        return client.put("/tenant/branding", {"primaryColor": f"#{index:02x}{step:04x}"}, format="json")

    def theme(step):
        body = {"name": f"t{index}-{step}", "cssVariables": {"--brand": "#123456"}}
        return client.post("/tenant/themes", body, format="json")

    def patch(step):
        return client.patch(f"/cases/{own_case['id']}/data", {"data": {"amount": step}}, format="json")

    def create(step):
        response = client.post(
            "/cases", {"case_type_key": flow.key, "case_data": {"amount": step}}, format="json"
        )
        if response.status_code == 201:
            created.append(response.json())
        return response

    def claim(step):
        return client.post(f"/tasks/{created[-1]['id']}/review/claim")

    kinds = [settings, patch, create, claim, branding, settings, patch, theme]
    return [kinds[step % len(kinds)] for step in range(OPERATIONS)]


def test_a_mix_of_audited_writes_never_deadlocks_and_keeps_the_chain(api, admin_user):
    flow = Flow(api, admin_user)
    flow.workflow([task_step("review")])
    plans = [_operations(api(admin_user), flow, index) for index in range(THREADS)]
    barrier = threading.Barrier(THREADS)

    def worker(index):
        try:
            barrier.wait(timeout=30)
            failures = []
            for step, operation in enumerate(plans[index]):
                response = operation(step)
                if response.status_code >= 300:
                    failures.append((operation.__name__, response.status_code, response.content[:200]))
            return failures
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        failures = [f for result in pool.map(worker, range(THREADS)) for f in result]
    assert failures == [], Counter((name, status) for name, status, _ in failures)
    chain = AuditEvent.objects.filter(chain=str(admin_user.tenant_id))
    appended = chain.count()
    report = ok(api(admin_user).get("/audit/verify-chain"))
    assert report["status"] == "valid" and report["entries_checked"] == appended
    assert chain.filter(action="tenant:settings_changed").count() == THREADS * OPERATIONS // 4
