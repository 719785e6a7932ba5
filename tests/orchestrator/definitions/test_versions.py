"""Task and DAG definitions are versioned: a PUT that changes one makes a new version, an unchanged
PUT keeps it, and every version stays readable with ?version=N (after a delete too)."""

from __future__ import annotations

import pytest

from tests.orchestrator.helpers import assert_error, put_dag, put_task

pytestmark = pytest.mark.django_db


def test_task_versions_count_changes_and_old_versions_stay_readable(api):
    assert put_task(api, "v_task", "echo one")["version"] == 1
    assert put_task(api, "v_task", "echo one")["version"] == 1  # nothing changed
    second = put_task(api, "v_task", "echo two", queue="vq")
    assert second["version"] == 2 and api.get("/api/tasks/v_task").json() == second
    first = api.get("/api/tasks/v_task", {"version": 1}).json()
    assert (first["command"], first["queue"], first["version"]) == ("echo one", "default", 1)
    assert first["created_at"] == second["created_at"]
    assert api.get("/api/tasks/v_task", {"version": 2}).json()["command"] == "echo two"
    assert_error(api.get("/api/tasks/v_task", {"version": 3}), 404, "not_found")
    assert_error(api.get("/api/tasks/v_task", {"version": "x"}), 400, "validation_error", "version")
    assert_error(api.get("/api/tasks/v_task", {"version": "0"}), 400, "validation_error", "version")
    assert api.get("/api/tasks").json()["tasks"][0]["version"] == 2

    assert api.delete("/api/tasks/v_task").status_code == 200
    assert api.get("/api/tasks/v_task", {"version": 1}).json()["command"] == "echo one"
    # created again after the delete: the numbering goes on, old versions keep their meaning
    assert put_task(api, "v_task", "echo three")["version"] == 3


def test_dag_versions_and_max_active_runs(api):
    put_task(api, "v_a")
    put_task(api, "v_b")
    assert put_dag(api, "v_dag", ["v_a"])["version"] == 1
    assert put_dag(api, "v_dag", ["v_a"])["version"] == 1
    changed = put_dag(api, "v_dag", ["v_a", "v_b"], max_active_runs=2)
    assert (changed["version"], changed["max_active_runs"]) == (2, 2)
    old = api.get("/api/dags/v_dag", {"version": 1}).json()
    assert old["tasks"] == [{"id": "v_a", "parameters": {}}] and old["max_active_runs"] is None
    assert_error(api.get("/api/dags/v_dag", {"version": 9}), 404, "not_found")
    for bad in (0, -1, "2", True):
        response = api.put("/api/dags/v_dag", {"tasks": ["v_a"], "max_active_runs": bad}, format="json")
        assert_error(response, 400, "validation_error", "max_active_runs")
    assert api.get("/api/dags/v_dag").json()["version"] == 2


def test_runs_name_the_versions_they_execute(api):
    put_task(api, "v_up", "echo up", queue="v_idle")
    put_task(api, "v_down", "echo down", dependencies=["v_up"], queue="v_idle")
    put_task(api, "v_down", "echo down2", dependencies=["v_up"], queue="v_idle")
    put_dag(api, "v_run_dag", ["v_down"])
    run_id = api.post("/api/schedule-dag", {"dag_id": "v_run_dag"}, format="json").json()["run_id"]
    detail = api.get(f"/api/runs/{run_id}").json()
    assert detail["versions"] == {"v_up": 1, "v_down": 2} and detail["dag_version"] == 1
    task_run = api.post("/api/schedule-task", {"task_id": "v_up"}, format="json").json()
    assert api.get(f"/api/runs/{task_run['run_id']}").json()["versions"] == {"v_up": 1}


def test_pools_put_list_and_unknown_pool(api):
    response = api.put("/api/pools/v_pool", {"slots": 3}, format="json")
    assert response.status_code == 201, response.content
    assert response.json() == {"name": "v_pool", "slots": 3, "used": 0, "queued": 0}
    assert api.put("/api/pools/v_pool", {"slots": 1}, format="json").json()["slots"] == 1
    for bad in ({}, {"slots": -1}, {"slots": "2"}, {"slots": True}):
        assert_error(api.put("/api/pools/v_pool", bad, format="json"), 400, "validation_error", "slots")
    assert_error(api.put("/api/tasks/v_pooled", {"command": "true", "pool": "nope"}, format="json"),
                 400, "validation_error", "pool")  # fmt: skip
    assert put_task(api, "v_pooled", pool="v_pool")["pool"] == "v_pool"
    api.post("/api/schedule-task", {"task_id": "v_pooled", "run_id": "v-pool-run"}, format="json")
    body = api.get("/api/pools").json()
    assert body["total"] == 1 and body["pools"] == [{"name": "v_pool", "slots": 1, "used": 0, "queued": 1}]
    assert_error(api.get("/api/pools", {"limit": 100000}), 400, "validation_error")
