"""Outbox events past ORCH_EVENT_RETENTION_DAYS are deleted in batches by the recovery sweep; only
those: recent ones, undelivered ones and those with deliveries stay, and 0 keeps everything."""

from __future__ import annotations

from datetime import timedelta

import pytest

from orchestrator.events.models import Event
from orchestrator.system.services import recovery_sweep
from orchestrator.webhooks.models import Delivery
from orchestrator.webhooks.services import events_prune, webhook_create
from shared.api.time import now_ms

pytestmark = pytest.mark.django_db


def _event(days_old: float, *, dispatched: bool = True) -> Event:
    at = now_ms() - timedelta(days=days_old)
    return Event.objects.create(
        type="task.completed", occurred_at=at, run_id="r", data={}, dispatched_at=at if dispatched else None
    )


@pytest.fixture
def events(settings):
    settings.EVENT_RETENTION_DAYS = 30
    old = [_event(40 - n / 10) for n in range(7)]  # 7 dispatched events past the window, oldest first
    undelivered = _event(35, dispatched=False)
    delivered = _event(34)
    webhook = webhook_create(
        name="w", url="http://127.0.0.1:9/hook", events=["task.completed"], secret="s", headers={}, filters={}
    )
    Delivery.objects.create(
        webhook=webhook, event=delivered, body="{}", next_attempt_at=now_ms(), created_at=now_ms()
    )
    recent = [_event(29), _event(1), _event(0)]
    return {"old": old, "kept": [undelivered, delivered, *recent]}


def test_only_dispatched_events_without_deliveries_past_the_window_are_deleted(events):
    assert events_prune(batch_size=3) == 7  # three batches of the oldest, then the window
    assert set(Event.objects.values_list("pk", flat=True)) == {e.pk for e in events["kept"]}


def test_a_call_stops_after_its_batches_and_the_next_goes_on(events):
    assert events_prune(batch_size=2, max_batches=2) == 4
    assert events_prune(batch_size=2, max_batches=2) == 3
    assert events_prune(batch_size=2, max_batches=2) == 0


def test_the_recovery_sweep_prunes(events):
    assert recovery_sweep(sweeper="test", force=True)["events_pruned"] == 7
    assert Event.objects.count() == len(events["kept"])


def test_zero_days_keeps_every_event(events, settings):
    settings.EVENT_RETENTION_DAYS = 0
    assert events_prune() == 0 and Event.objects.count() == 7 + len(events["kept"])
