"""The webhook outbox on SQLite: SKIP LOCKED does not exist there, so concurrent dispatchers are
kept apart by SQLite's immediate transactions (one writer at a time): each event is claimed once."""

from __future__ import annotations

import threading

import pytest
from django.db import connections, transaction
from rest_framework.test import APIClient

from orchestrator.events.models import Event
from orchestrator.events.services import event_emit
from orchestrator.webhooks.models import Delivery
from orchestrator.webhooks.services import events_dispatch


@pytest.mark.django_db(transaction=True)
def test_concurrent_dispatchers_claim_each_event_once():
    body = {
        "name": "r",
        "url": "http://127.0.0.1:9/hook",
        "events": ["task.failed"],
        "filters": {},
        "secret": "s3cret-s3cret",
    }
    response = APIClient().post("/api/webhooks", body, format="json")
    assert response.status_code == 201, response.content
    Event.objects.all().delete()
    with transaction.atomic():
        for i in range(40):
            event_emit(type="task.failed", data={"run_id": f"r{i}", "task_id": "t"})
    claimed: list[int] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def dispatcher() -> None:
        try:
            barrier.wait()
            while count := events_dispatch(batch_size=7):
                claimed.append(count)
        except BaseException as exc:  # noqa: BLE001 - surfaced by the assertion below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=dispatcher) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sum(claimed) == 40  # a double claim would count an event twice
    assert not Event.objects.filter(dispatched_at__isnull=True).exists()
    assert Delivery.objects.count() == 40
    assert Delivery.objects.values("event").distinct().count() == 40
