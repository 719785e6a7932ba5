"""A real agent process (`manage_orch.py run_agent`) as `make run` starts it: woken through the
filesystem broker, claiming and finishing task runs in the same SQLite file the test writes to
(two processes, one writer at a time)."""

from __future__ import annotations

import os
import uuid

import pytest
from django.db import connection
from rest_framework.test import APIClient

from orchestrator.runs.models import TaskRun
from tests.orchestrator.helpers import put_dag, put_task, start_agent, tasks_by_id, wait_agent_ready, wait_run
from tests.support.processes import wait_for

QUEUE = f"sqlite{uuid.uuid4().hex[:6]}"


@pytest.fixture(scope="module")
def agent(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        database = connection.settings_dict["NAME"]
    env = {
        "DJANGO_SETTINGS_MODULE": "orchestrator.config.settings.test_sqlite",
        "ORCH_DATABASE_URL": f"sqlite:///{database}",
    }
    proc = start_agent(f"agent-{QUEUE}", QUEUE, env)
    try:
        wait_agent_ready(proc)
        yield proc
    finally:
        proc.stop(timeout=3)  # SIGTERM, then SIGKILL: nothing of the agent outlives this module


@pytest.fixture
def api(transactional_db) -> APIClient:
    return APIClient()


def schedule_dag(api: APIClient, dag_id: str) -> str:
    response = api.post("/api/schedule-dag", {"dag_id": dag_id}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["run_id"]


def test_an_agent_process_runs_a_dag(agent, api):
    put_task(api, "a", "echo a-out", queue=QUEUE)
    put_task(api, "b", "echo b-out", dependencies=["a"], queue=QUEUE)
    put_task(api, "c", "echo c-out", dependencies=["a"], queue=QUEUE)
    put_task(api, "d", "echo d-out", dependencies=["b", "c"], queue=QUEUE)
    put_dag(api, "diamond", ["a", "b", "c", "d"])
    run = wait_run(api, schedule_dag(api, "diamond"), timeout=60)
    assert run["status"] == "completed", (run, agent.log_text())
    by_id = tasks_by_id(run)
    assert {t: by_id[t]["status"] for t in "abcd"} == dict.fromkeys("abcd", "completed")
    agents = set(TaskRun.objects.filter(run_id=run["run_id"]).values_list("agent_id", flat=True))
    assert len(agents) == 1 and agents.pop().startswith(f"{agent.name}@")
    assert by_id["d"]["start_time"] >= max(by_id["b"]["end_time"], by_id["c"]["end_time"])
    logs = api.get(f"/api/tasks/{by_id['d']['task_run_id']}/logs").json()
    assert "d-out" in str(logs)


def process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_cancelling_a_run_stops_its_running_command(agent, api, tmp_path):
    pidfile = tmp_path / "pid"
    put_task(api, "slow", f"echo $$ > {pidfile}; sleep 30", queue=QUEUE)
    put_dag(api, "slow", ["slow"])
    run_id = schedule_dag(api, "slow")
    wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), timeout=60, what="slow to start")
    assert TaskRun.objects.get(run_id=run_id).status == "running"
    assert api.post(f"/api/cancel-run/{run_id}", {"force": True}, format="json").status_code == 200
    run = wait_run(api, run_id, timeout=30)
    assert run["status"] == "cancelled" and tasks_by_id(run)["slow"]["status"] == "cancelled"
    # The agent sees the cancel when it polls the row, and kills the command.
    wait_for(lambda: process_gone(int(pidfile.read_text())), timeout=15, what="the command to be killed")
