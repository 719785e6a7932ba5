"""The orchestrator console on SQLite, as `make run` serves it: every page renders, the DAG filter's
glob (a regex lookup SQLite gets from Django's function) works, and scheduling writes the run."""

from __future__ import annotations

import pytest

from orchestrator.runs.models import Run, TaskRun
from orchestrator.security.services import user_create
from tests.orchestrator.console.conftest import PASSWORD, put_dag, put_task, signed_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_pages_and_scheduling_on_sqlite():
    put_task("extract", "echo $SOURCE", parameters={"SOURCE": "db"})
    put_task("load", "echo load", dependencies=["extract"])
    put_dag("etl", ["load"])
    client = signed_in(user_create(username="op", password=PASSWORD, role="operator"))
    response = client.post("/console/dags/etl/schedule", {"p-extract-SOURCE": "files"})
    assert response.status_code == 302, response.content
    run = Run.objects.get()
    assert TaskRun.objects.get(run=run, task_id="extract").env["SOURCE"] == "files"
    for url in ("/console/", "/console/?status=pending&dag_id=etl", f"/console/runs/{run.run_id}",
                f"/console/runs/{run.run_id}/live", "/console/dags?filter=e*", "/console/dags/etl",
                "/console/tasks?filter=loa", "/console/tasks/extract", "/console/agents", "/console/queues",
                f"/console/task-runs/{TaskRun.objects.get(run=run, task_id='load').id}"):  # fmt: skip
        assert client.get(url).status_code == 200, url
    assert b">etl</a>" in client.get("/console/dags?filter=e*").content
    assert b">etl</a>" not in client.get("/console/dags?filter=x*").content


def test_the_operator_pages_on_sqlite():
    """Schedules (made from the form), the grid, bulk actions, the log download and preferences."""
    put_task("extract", "echo $SOURCE", parameters={"SOURCE": "db"})
    put_dag("etl", ["extract"])
    admin = signed_in(user_create(username="adm", password=PASSWORD, role="admin"))
    made = admin.post("/console/schedules/new", {"id": "hourly", "target": "dag:etl", "timing": "cron",
                                                 "cron": "0 * * * *", "timezone": "Europe/Berlin"})  # fmt: skip
    assert made.status_code == 302, made.content
    assert admin.post("/console/dags/etl/schedule", {}).status_code == 302
    run = Run.objects.get()
    task_run = TaskRun.objects.get(run=run)
    for url in ("/console/schedules", "/console/schedules/hourly", "/console/schedules/hourly/edit",
                "/console/schedules/preview?cron=*/5+*+*+*+*&timezone=Asia/Tokyo", "/console/grid?dag_id=etl",
                f"/console/task-runs/{task_run.id}/log.txt", "/console/preferences"):  # fmt: skip
        assert admin.get(url).status_code == 200, url
    done = admin.post("/console/runs/bulk", {"action": "cancel", "run": [run.run_id], "confirmed": "yes"})
    assert done.status_code == 302 and Run.objects.get().status == "cancelled"
