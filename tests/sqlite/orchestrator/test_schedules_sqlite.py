"""Time schedules on SQLite, as `make run` has them: SQLite has no row locks (`FOR UPDATE` is left
out and one writer at a time serialises ticks), so the cursor and the unique (schedule_id,
fire_time) pair on runs are what keep two ticks from firing a fire time twice."""

from __future__ import annotations

from datetime import timedelta

import pytest
from rest_framework.test import APIClient

from orchestrator.runs.models import Run
from orchestrator.schedules.firing import schedules_tick
from orchestrator.schedules.models import Schedule
from tests.orchestrator.helpers import put_task
from tests.sqlite.threads import race

pytestmark = pytest.mark.django_db(transaction=True)


def test_create_fire_and_status_on_sqlite():
    api = APIClient()
    put_task(api, "lite_task", "echo lite")
    response = api.post(
        "/api/schedules",
        {
            "id": "lite",
            "task_id": "lite_task",
            "cron": "*/5 * * * *",
            "timezone": "Europe/Berlin",
            "catchup": "all",
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    assert len(response.json()["next_fire_times"]) == 5
    first = Schedule.objects.get(pk="lite").next_fire_time
    now = first + timedelta(minutes=12)

    def tick() -> int:
        return schedules_tick(now=now, ticker="lite-ticker")

    made = race([tick, tick])
    assert sum(made) == 3  # first, +5 and +10 minutes, each once whichever tick made it
    times = sorted(Run.objects.filter(schedule_id="lite").values_list("fire_time", flat=True))
    assert times == [first + timedelta(minutes=m) for m in (0, 5, 10)]
    scheduler = api.get("/api/status").json()["components"]["scheduler"]
    assert scheduler["status"] == "healthy" and scheduler["schedules"]["active"] == 1
