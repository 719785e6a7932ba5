"""/api/status shows the scheduler: when it last ticked, how many processes tick, schedule counts;
a scheduler that stopped ticking while an unpaused schedule has fire times left degrades it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from orchestrator.agents.services import agent_heartbeat
from orchestrator.schedules.firing import schedules_tick
from orchestrator.schedules.models import SchedulerTick
from orchestrator.schedules.services import ScheduleSpec, schedule_create, schedule_set_paused
from orchestrator.system.services import sweep_state_record
from shared.api.time import now_ms
from tests.orchestrator.helpers import put_task
from tests.support.processes import wait_for

pytestmark = pytest.mark.django_db


def status(api) -> dict:
    response = api.get("/api/status")
    assert response.status_code == 200, response.content
    return response.json()


def test_scheduler_component(api, settings):
    agent_heartbeat(agent_id="a@test", queues=["default"], tags=[], hostname="test", pid=1, session_id="s1")
    sweep_state_record(at=now_ms(), by="a@test")  # recovery running: the overall status hangs on it too
    body = status(api)
    assert body["components"]["scheduler"]["status"] == "idle"  # nothing to fire, nothing ticking
    assert body["components"]["scheduler"]["last_tick_at"] is None and body["status"] == "healthy"

    put_task(api, "status_task", "true")
    schedule_create(schedule_id="st", spec=ScheduleSpec(task_id="status_task", interval_seconds=60))
    body = status(api)
    assert body["components"]["scheduler"]["status"] == "degraded" and body["status"] == "degraded"
    assert body["components"]["scheduler"]["schedules"] == {"total": 1, "active": 1, "paused": 0}

    schedules_tick(ticker="ticker-1")
    body = status(api)
    scheduler = body["components"]["scheduler"]
    assert scheduler["status"] == "healthy" and scheduler["count"] == 1 and body["status"] == "healthy"
    assert (
        scheduler["last_tick_at"].endswith("Z")
        and scheduler["tick_seconds"] == settings.SCHEDULER_TICK_SECONDS
    )

    settings.SCHEDULER_TICK_SECONDS = 0.01  # the last tick soon falls out of three periods
    wait_for(lambda: status(api)["components"]["scheduler"]["status"] == "degraded", what="a stale scheduler")
    schedule_set_paused(schedule_id="st", paused=True)
    body = status(api)
    assert body["components"]["scheduler"]["status"] == "idle" and body["status"] == "healthy"
    assert body["components"]["scheduler"]["schedules"] == {"total": 1, "active": 0, "paused": 1}


def test_tick_records_of_processes_silent_for_a_day_are_dropped():
    schedules_tick(ticker="gone")
    SchedulerTick.objects.filter(name="gone").update(last_tick_at=now_ms() - timedelta(days=1, seconds=1))
    schedules_tick(ticker="live")
    assert list(SchedulerTick.objects.values_list("name", flat=True)) == ["live"]
