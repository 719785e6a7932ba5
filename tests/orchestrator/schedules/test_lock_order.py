"""Scheduler ticks firing a DAG with max_active_runs while the DAG is PUT and its runs cancelled,
from real threads against PostgreSQL.

A fire makes its runs and their audit events in the schedule's transaction; a DAG PUT locks the
DAG row, a cancel the run row, each before its audit append. Admitting a fired run inside the fire
(the DAG row, then waiting runs, after the fire's append) deadlocked with both; with the audit chain
last everywhere none fails.
"""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from rest_framework.test import APIClient

from orchestrator.runs.models import Run
from orchestrator.schedules.firing import schedules_tick
from orchestrator.schedules.services import ScheduleSpec, schedule_create
from tests.orchestrator.helpers import put_dag, put_task

HOUR = timedelta(hours=1)
TICKS = 12
WRITES = 30


@pytest.mark.django_db(transaction=True)
def test_fires_of_a_limited_dag_beside_its_puts_and_cancels_never_deadlock(api, caplog):
    put_task(api, "lock_a", "true")
    put_dag(api, "lock_dag", [{"id": "lock_a"}], max_active_runs=1)
    schedules = [
        schedule_create(
            schedule_id=None,
            spec=ScheduleSpec(dag_id="lock_dag", interval_seconds=3600, catchup="all", max_catchup=3),
        )
        for _ in range(4)
    ]
    first = min(s.next_fire_time for s in schedules)
    barrier = threading.Barrier(3)
    made: list[int] = []
    failures: list = []

    def ticker() -> None:
        for step in range(TICKS):
            made.append(schedules_tick(now=first + (3 + step) * HOUR))

    def dag_writer() -> None:
        for step in range(WRITES):
            body = {"tasks": [{"id": "lock_a"}], "max_active_runs": 1, "description": f"v{step}"}
            response = APIClient().put("/api/dags/lock_dag", body, format="json")
            if response.status_code != 200:
                failures.append(("put", response.status_code, response.content[:200]))

    def canceller() -> None:
        for _ in range(WRITES):
            waiting = Run.objects.filter(dag_id="lock_dag", waiting=True).order_by("-start_time")
            run_id = waiting.values_list("run_id", flat=True).first()
            if run_id is None:
                continue
            response = APIClient().post(f"/api/runs/{run_id}/cancel", format="json")
            if response.status_code not in (200, 409):  # 409: it ended meanwhile
                failures.append(("cancel", response.status_code, response.content[:200]))

    def thread(work) -> None:
        try:
            barrier.wait(timeout=30)
            work()
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=thread, args=(w,)) for w in (ticker, dag_writer, canceller)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert failures == []
    # A fire that failed (a deadlock among them) is rolled back and logged, then left for later.
    assert not [r for r in caplog.records if r.levelname == "ERROR"], caplog.text
    assert sum(made) == Run.objects.filter(dag_id="lock_dag").count() > len(schedules)
    report = api.get("/api/audit/verify").json()
    assert report["status"] == "valid", report
