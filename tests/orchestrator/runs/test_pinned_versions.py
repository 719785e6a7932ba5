"""A run executes the definition versions it was scheduled with, even when a task is edited while
it runs; a rerun keeps them unless asked for the latest."""

from __future__ import annotations

import pytest

from orchestrator.runs.models import TaskRun
from tests.orchestrator.helpers import put_dag, put_task, tasks_by_id, wait_run
from tests.support.processes import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def logs_of(api, run: dict, task_id: str) -> str:
    task_run_id = tasks_by_id(run)[task_id]["task_run_id"]
    return api.get(f"/api/tasks/{task_run_id}/logs").json()["logs"]


def rerun(api, run_id: str, **body) -> dict:
    response = api.post(f"/api/rerun/{run_id}", body, format="json")
    assert response.status_code == 201, response.content
    return wait_run(api, response.json()["new_run_id"])


def test_an_edit_mid_run_does_not_change_the_running_run(agents, api, tmp_path):
    gate = tmp_path / "gate"
    put_task(api, "pin_gate", f"while [ ! -e {gate} ]; do sleep 0.05; done")
    put_task(api, "pin_work", "echo old-${WHO}", dependencies=["pin_gate"], parameters={"WHO": "task"})
    put_dag(api, "pin_dag", ["pin_gate", "pin_work"])
    run_id = api.post("/api/schedule-dag", {"dag_id": "pin_dag"}, format="json").json()["run_id"]
    wait_for(lambda: TaskRun.objects.get(run_id=run_id, task_id="pin_gate").status == "running",
             what="the upstream task to start")  # fmt: skip

    edited = put_task(
        api, "pin_work", "echo new-${WHO}", dependencies=["pin_gate"], parameters={"WHO": "task"}
    )
    assert edited["version"] == 2
    gate.touch()
    run = wait_run(api, run_id)
    assert run["status"] == "completed", run
    assert logs_of(api, run, "pin_work") == "old-task"
    assert api.get(f"/api/runs/{run_id}").json()["versions"] == {"pin_gate": 1, "pin_work": 1}

    pinned = rerun(api, run_id)
    assert pinned["status"] == "completed" and logs_of(api, pinned, "pin_work") == "old-task"
    assert api.get(f"/api/runs/{pinned['run_id']}").json()["versions"] == {"pin_gate": 1, "pin_work": 1}

    latest = rerun(api, run_id, latest=True)
    assert latest["status"] == "completed" and logs_of(api, latest, "pin_work") == "new-task"
    assert api.get(f"/api/runs/{latest['run_id']}").json()["versions"] == {"pin_gate": 1, "pin_work": 2}
    response = api.post(f"/api/rerun/{run_id}", {"latest": "yes"}, format="json")
    assert response.status_code == 400 and response.json()["details"]["field"] == "latest"


def test_latest_keeps_the_schedule_parameters(agents, api):
    put_task(api, "pin_param", "echo v1-${WHO}", parameters={"WHO": "default"})
    scheduled = api.post("/api/schedule-task", {"task_id": "pin_param", "parameters": {"WHO": "caller"}},
                         format="json").json()  # fmt: skip
    first = wait_run(api, scheduled["run_id"])
    assert logs_of(api, first, "pin_param") == "v1-caller"
    put_task(api, "pin_param", "echo v2-${WHO}", parameters={"WHO": "default"})
    assert logs_of(api, rerun(api, first["run_id"], latest=True), "pin_param") == "v2-caller"
    assert logs_of(api, rerun(api, first["run_id"], reset_params=True), "pin_param") == "v2-default"


def test_a_partial_rerun_with_the_latest_definitions_keeps_the_carried_over_upstream(agents, api):
    """Selected tasks whose dependencies are carried over (failed_only, from_task) take their
    latest definitions without the carried ones: this was a 500 (KeyError) with reset_params or
    latest."""
    put_task(api, "part_a", "echo a")
    put_task(api, "part_b", "echo b-${WHO}", dependencies=["part_a"], parameters={"WHO": "v1"})
    put_task(api, "part_c", "exit 3", dependencies=["part_b"])
    put_dag(api, "part_dag", ["part_a", "part_b", "part_c"])
    run_id = api.post("/api/schedule-dag", {"dag_id": "part_dag"}, format="json").json()["run_id"]
    first = wait_run(api, run_id)
    assert first["status"] == "failed" and tasks_by_id(first)["part_c"]["status"] == "failed"
    put_task(api, "part_b", "echo b2-${WHO}", dependencies=["part_a"], parameters={"WHO": "v2"})
    put_task(api, "part_c", "echo c2", dependencies=["part_b"])

    for flags in ({"reset_params": True}, {"latest": True}):
        again = rerun(api, run_id, failed_only=True, **flags)
        assert again["status"] == "completed", again
        assert logs_of(api, again, "part_c") == "c2"
        carried = TaskRun.objects.get(run_id=again["run_id"], task_id="part_b")
        assert carried.carried_from == tasks_by_id(first)["part_b"]["task_run_id"]
        assert api.get(f"/api/runs/{again['run_id']}").json()["versions"] == {
            "part_a": 1, "part_b": 1, "part_c": 2,
        }  # fmt: skip

    from_b = rerun(api, run_id, from_task="part_b", reset_params=True)
    assert from_b["status"] == "completed", from_b
    assert logs_of(api, from_b, "part_b") == "b2-v2" and logs_of(api, from_b, "part_c") == "c2"
    assert TaskRun.objects.get(run_id=from_b["run_id"], task_id="part_a").carried_from
