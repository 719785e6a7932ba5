"""Concurrent deliveries of one delivery id against PostgreSQL: exactly one case is made."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from threading import Barrier

import pytest
from django.db import connection

from casemgmt.cases.models import Case
from casemgmt.webhooks.models import InboundDelivery
from tests.casemgmt.webhooks.test_inbound import configure, deliver
from tests.casemgmt.workflows.conftest import Flow, task_step


@pytest.mark.django_db(transaction=True)
def test_the_same_delivery_sent_at_once_makes_one_case(api, admin_user):
    flow = Flow(api, admin_user)
    flow.workflow([task_step("triage")])
    hook = configure(flow)
    barrier = Barrier(4)

    def send(_: int) -> tuple[int, str]:
        try:
            barrier.wait()
            response = deliver(hook, {"subject": "Raced", "order": {"total": 3}}, delivery="same-id")
            return response.status_code, response.json()["status"]
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(send, range(4)))
    assert sorted(results) == [(202, "created")] + [(202, "duplicate")] * 3
    assert Case.objects.filter(tenant_id=admin_user.tenant_id).count() == 1
    assert InboundDelivery.objects.filter(delivery_id="same-id").count() == 1
