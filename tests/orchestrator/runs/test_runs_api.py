"""Scheduling, runs, graph, logs, cancel, rerun, queues and purge through the HTTP API, without
agents (nothing here needs a command to execute: on-commit wake-ups are not sent in these tests)."""

from __future__ import annotations

import re

import pytest

from orchestrator.events.models import Event
from orchestrator.runs.models import Run, TaskRun
from tests.orchestrator.helpers import api_key, assert_error, put_dag, put_task

pytestmark = pytest.mark.django_db

ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
TASK_RUN_ID = re.compile(r"^(?P<task>.+)_[0-9a-f]{8}$")


@pytest.fixture
def diamond(api):
    put_task(api, "a", "echo a", parameters={"P": "a-default"})
    put_task(api, "b", dependencies=["a"])
    put_task(api, "c", dependencies=["a"])
    put_task(api, "d", dependencies=["b", "c"])
    put_dag(api, "diamond", ["a", "b", "c", "d"])
    return "diamond"


def test_schedule_dag_response_and_initial_states(api, diamond):
    response = api.post("/api/schedule-dag", {"dag_id": diamond, "run_id": "my-run"}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"success", "run_id", "status", "start_time", "tasks"}
    assert body["success"] is True and body["run_id"] == "my-run" and body["status"] == "pending"
    assert ISO_Z.match(body["start_time"])
    assert sorted(t["id"] for t in body["tasks"]) == ["a", "b", "c", "d"]
    for t in body["tasks"]:
        assert TASK_RUN_ID.match(t["task_run_id"]).group("task") == t["id"] and t["status"] == "pending"
    # right after scheduling, the root is queued; the others wait for their dependencies
    states = dict(TaskRun.objects.filter(run_id="my-run").values_list("task_id", "status"))
    assert states == {"a": "queued", "b": "pending", "c": "pending", "d": "pending"}
    types = list(Event.objects.filter(run_id="my-run").values_list("type", flat=True))
    assert types[0] == "dag.pending" and types.count("task.pending") == 4 and types[-1] == "task.queued"
    payload = Event.objects.get(run_id="my-run", type="task.queued").data
    assert set(payload) == {
        "run_id",
        "dag_id",
        "task_id",
        "task_run_id",
        "status",
        "start_time",
        "end_time",
        "duration_seconds",
    }
    assert payload["dag_id"] == "diamond" and payload["task_id"] == "a" and payload["status"] == "queued"


def test_schedule_task_includes_its_dependency_closure(api, diamond):
    response = api.post(
        "/api/schedule-task", {"task_id": "d", "parameters": {"X": "1", "a.P": "over"}}, format="json"
    )
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"success", "run_id", "dag_run_id", "task_run_id", "status", "start_time"}
    assert body["run_id"] == body["dag_run_id"] and body["status"] == "pending"
    run = api.get(f"/api/runs/{body['run_id']}", {"include_tasks": "true"}).json()
    assert run["dag_id"] is None and run["task_count"] == 4
    env = {t.task_id: t.env for t in TaskRun.objects.filter(run_id=body["run_id"])}
    assert env["d"] == {"X": "1"} and env["a"] == {"P": "over"} and env["b"] == {}


def test_schedule_task_overrides_queue_and_applies_run_settings(api, diamond):
    body = api.post(
        "/api/schedule-task",
        {"task_id": "a", "queue": "special", "timeout_seconds": 5, "retries": 2, "retry_delay_seconds": 3},
        format="json",
    ).json()
    tr = TaskRun.objects.get(pk=body["task_run_id"])
    assert (tr.queue, tr.timeout_seconds, tr.max_attempts, tr.retry_delay_seconds) == ("special", 5, 3, 3)


@pytest.mark.parametrize("value", [0, -1, "5", 1.5, True, "abc", [1]])
def test_timeout_seconds_must_be_a_positive_integer(api, diamond, value):
    for path, key in (("/api/schedule-dag", "dag_id"), ("/api/schedule-task", "task_id")):
        target = diamond if key == "dag_id" else "a"
        body = assert_error(
            api.post(path, {key: target, "timeout_seconds": value}, format="json"),
            400,
            "validation_error",
            "timeout_seconds",
        )
        assert "positive integer" in body["details"]["error"]
    assert not TaskRun.objects.exists()


def test_schedule_errors(api, diamond):
    assert_error(api.post("/api/schedule-dag", {"dag_id": "ghost"}, format="json"), 404, "not_found")
    assert_error(api.post("/api/schedule-task", {"task_id": "ghost"}, format="json"), 404, "not_found")
    assert_error(api.post("/api/schedule-dag", {}, format="json"), 400, "validation_error", "dag_id")
    assert_error(api.post("/api/schedule-task", {}, format="json"), 400, "validation_error", "task_id")
    assert_error(
        api.post("/api/schedule-dag", {"dag_id": diamond, "parameters": {"ghost.X": "1"}}, format="json"),
        400,
        "validation_error",
        "parameters.ghost.X",
    )
    assert_error(
        api.post("/api/schedule-dag", {"dag_id": diamond, "parameters": {"X": "1"}}, format="json"),
        400,
        "validation_error",
        "parameters.X",
    )
    assert_error(
        api.post("/api/schedule-dag", {"dag_id": diamond, "retries": -1}, format="json"),
        400,
        "validation_error",
        "retries",
    )
    assert_error(
        api.post("/api/schedule-dag", {"dag_id": diamond, "context": "ghost"}, format="json"),
        400,
        "validation_error",
        "context",
    )
    assert_error(
        api.post("/api/schedule-dag", {"dag_id": diamond, "env_vars": {"A": {"x": 1}}}, format="json"),
        400,
        "validation_error",
        "env_vars.A",
    )
    assert (
        api.post("/api/schedule-dag", {"dag_id": diamond, "run_id": "dup"}, format="json").status_code == 201
    )
    body = assert_error(
        api.post("/api/schedule-dag", {"dag_id": diamond, "run_id": "dup"}, format="json"),
        409,
        "already_exists",
        "run_id",
    )
    assert "dup" in body["message"]
    assert TaskRun.objects.filter(run_id="dup").count() == 4


def test_context_cycle_at_schedule_time_is_400(api, diamond):
    from orchestrator.definitions.models import Context
    from shared.api.time import now_ms

    now = now_ms()
    Context.objects.create(
        id="x", extends="y", created_at=now, updated_at=now
    )  # a cycle made outside the API
    Context.objects.create(id="y", extends="x", created_at=now, updated_at=now)
    assert_error(
        api.post("/api/schedule-dag", {"dag_id": diamond, "context": "x"}, format="json"),
        400,
        "validation_error",
        "extends",
    )


def test_parameter_set_supplies_schedule_parameters(api, diamond):
    api.put("/api/parameter-sets/ps", {"parameters": {"a.P": "from-set", "b.Q": "q"}}, format="json")
    body = api.post(
        "/api/schedule-dag",
        {"dag_id": diamond, "parameter_set": "ps", "parameters": {"b.Q": "explicit"}},
        format="json",
    ).json()
    env = {t.task_id: t.env for t in TaskRun.objects.filter(run_id=body["run_id"])}
    assert env["a"] == {"P": "from-set"} and env["b"] == {"Q": "explicit"}


def test_runs_list_filters_sort_and_shape(api, diamond):
    put_task(api, "solo")
    put_dag(api, "other", ["solo"])
    for run_id, dag in (("r1", diamond), ("r2", "other"), ("r3", diamond)):
        api.post("/api/schedule-dag", {"dag_id": dag, "run_id": run_id}, format="json")
    api.post("/api/cancel-run/r3")
    body = api.get("/api/runs").json()
    assert set(body) == {"runs", "total", "limit", "offset"} and body["total"] == 3 and body["limit"] == 50
    item = next(r for r in body["runs"] if r["run_id"] == "r1")
    assert item == {
        "run_id": "r1", "dag_id": diamond, "status": "pending", "start_time": item["start_time"], "end_time": None,
        "duration_seconds": None, "task_count": 4, "completed_tasks": 0, "failed_tasks": 0, "original_run_id": None,
        "priority": 0,
        "schedule_id": None, "fire_time": None,
    }  # fmt: skip
    assert [
        r["run_id"] for r in api.get("/api/runs", {"dag_id": diamond, "sort": "run_id:asc"}).json()["runs"]
    ] == ["r1", "r3"]
    assert [r["run_id"] for r in api.get("/api/runs", {"status": "cancelled"}).json()["runs"]] == ["r3"]
    assert api.get("/api/runs", {"status": "pending", "dag_id": "other"}).json()["total"] == 1
    assert api.get("/api/runs", {"since": "2100-01-01T00:00:00Z"}).json()["total"] == 0
    assert api.get("/api/runs", {"until": "2000-01-01T00:00:00Z"}).json()["total"] == 0
    assert [
        r["run_id"] for r in api.get("/api/runs", {"sort": "run_id:desc", "limit": 2}).json()["runs"]
    ] == ["r3", "r2"]
    assert_error(api.get("/api/runs", {"status": "weird"}), 400, "validation_error", "status")
    assert_error(api.get("/api/runs", {"since": "yesterday"}), 400, "validation_error", "since")
    assert_error(api.get("/api/runs", {"sort": "nope:asc"}), 400, "validation_error", "sort")
    assert_error(api.get("/api/runs", {"offset": -1}), 400, "validation_error", "offset")


def test_run_detail_graph_and_logs(api, diamond):
    run_id = api.post("/api/schedule-dag", {"dag_id": diamond, "context": None}, format="json").json()[
        "run_id"
    ]
    detail = api.get(f"/api/runs/{run_id}").json()
    assert "tasks" not in detail and detail["context"] == {}
    detail = api.get(f"/api/runs/{run_id}", {"include_tasks": "true", "include_logs": "true"}).json()
    task = detail["tasks"][0]
    assert set(task) >= {
        "task_id",
        "task_run_id",
        "status",
        "start_time",
        "end_time",
        "duration_seconds",
        "logs",
    }
    assert task["logs"] == ""
    assert_error(
        api.get(f"/api/runs/{run_id}", {"include_tasks": "maybe"}), 400, "validation_error", "include_tasks"
    )

    graph = api.get(f"/api/runs/{run_id}/graph").json()
    ids = {n["task_id"]: n["id"] for n in graph["nodes"]}
    assert graph["run_id"] == run_id and graph["dag_id"] == diamond and len(graph["nodes"]) == 4
    assert sorted((e["from"], e["to"]) for e in graph["edges"]) == sorted(
        [(ids["a"], ids["b"]), (ids["a"], ids["c"]), (ids["b"], ids["d"]), (ids["c"], ids["d"])]
    )
    logs = api.get(f"/api/tasks/{ids['a']}/logs").json()
    assert logs == {
        "task_run_id": ids["a"],
        "logs": "",
        "has_more": True,
        "truncated": False,
        "start_time": None,
        "end_time": None,
    }
    assert_error(api.get(f"/api/tasks/{ids['a']}/logs", {"tail": 0}), 400, "validation_error", "tail")
    assert_error(api.get("/api/tasks/ghost_12345678/logs"), 404, "not_found")
    assert_error(api.get("/api/runs/ghost"), 404, "not_found")
    assert_error(api.get("/api/runs/ghost/graph"), 404, "not_found")


def test_cancel_pending_run(api, diamond):
    run_id = api.post("/api/schedule-dag", {"dag_id": diamond}, format="json").json()["run_id"]
    response = api.post(f"/api/cancel-run/{run_id}?force=false")
    assert response.status_code == 200
    body = response.json()
    assert body["success"] is True and body["run_id"] == run_id and isinstance(body["message"], str)
    assert set(TaskRun.objects.filter(run_id=run_id).values_list("status", flat=True)) == {"cancelled"}
    assert Event.objects.filter(run_id=run_id, type="dag.cancelled").count() == 1
    assert Event.objects.filter(run_id=run_id, type="task.cancelled").count() == 4
    assert_error(api.post(f"/api/cancel-run/{run_id}"), 409, "invalid_state")
    assert_error(api.post("/api/cancel-run/ghost"), 404, "not_found")
    assert_error(api.post(f"/api/cancel-run/{run_id}?force=perhaps"), 400, "validation_error", "force")


@pytest.mark.parametrize(
    ("path", "body", "forced"),
    [
        ("", {"force": True}, True),
        ("?force=true", None, True),
        ("", None, False),
        ("", {"force": False}, False),
        # lenient: a force that is not a boolean, or a body that is not an object, is no force
        ("", {"force": "yes"}, False),
        ("", [True], False),
    ],
)
def test_cancel_reads_force_from_a_json_body_or_the_query(api, diamond, path, body, forced):
    run_id = api.post("/api/schedule-dag", {"dag_id": diamond}, format="json").json()["run_id"]
    response = api.post(f"/api/cancel-run/{run_id}{path}", body, format="json")
    assert response.status_code == 200, response.content
    assert Run.objects.get(pk=run_id).cancel_force is forced


def test_rerun_rules(api, diamond):
    run_id = api.post("/api/schedule-dag", {"dag_id": diamond}, format="json").json()["run_id"]
    assert_error(api.post(f"/api/rerun/{run_id}"), 409, "invalid_state")  # still pending
    api.post(f"/api/cancel-run/{run_id}")
    assert_error(
        api.post(f"/api/rerun/{run_id}", {"from_task": "ghost"}, format="json"),
        400,
        "validation_error",
        "from_task",
    )
    assert_error(
        api.post(f"/api/rerun/{run_id}", {"failed_only": "yes"}, format="json"),
        400,
        "validation_error",
        "failed_only",
    )
    assert_error(api.post("/api/rerun/ghost"), 404, "not_found")
    response = api.post(f"/api/rerun/{run_id}", {"from_task": "b", "reset_params": True}, format="json")
    assert response.status_code == 201
    new_run = response.json()["new_run_id"]
    # b and its downstream d execute; so does their unfinished (cancelled) upstream a and c
    assert sorted(TaskRun.objects.filter(run_id=new_run).values_list("task_id", flat=True)) == [
        "a",
        "b",
        "c",
        "d",
    ]
    assert dict(TaskRun.objects.filter(run_id=new_run).values_list("task_id", "status"))["a"] == "queued"
    assert api.get(f"/api/runs/{new_run}").json()["original_run_id"] == run_id


def test_queues_positions_and_purge(api):
    put_task(api, "q1", queue="idle-queue")
    put_task(api, "q2", queue="idle-queue")
    r1 = api.post("/api/schedule-task", {"task_id": "q1"}, format="json").json()
    r2 = api.post("/api/schedule-task", {"task_id": "q2"}, format="json").json()
    queues = {q["name"]: q for q in api.get("/api/queues").json()["queues"]}
    idle = queues["idle-queue"]
    assert idle["length"] == 2 and idle["consumer_count"] == 0
    assert idle["tasks"] == [
        {"task_run_id": r1["task_run_id"], "dag_run_id": r1["run_id"], "position": 0},
        {"task_run_id": r2["task_run_id"], "dag_run_id": r2["run_id"], "position": 1},
    ]
    response = api.post("/api/queues/idle-queue/purge")
    assert response.status_code == 200
    body = response.json()
    assert body["success"] is True and body["tasks_removed"] == 2 and isinstance(body["message"], str)
    queues = {q["name"]: q for q in api.get("/api/queues").json()["queues"]}
    assert queues["idle-queue"]["length"] == 0 and queues["idle-queue"]["tasks"] == []
    assert api.get(f"/api/runs/{r1['run_id']}").json()["status"] == "cancelled"
    assert api.post("/api/queues/idle-queue/purge").json()["tasks_removed"] == 0


@pytest.mark.parametrize(
    ("method", "path"),
    [("post", "/api/schedule-dag"), ("post", "/api/schedule-task"), ("post", "/api/cancel-run/x"), ("post", "/api/rerun/x"),
     ("get", "/api/runs"), ("get", "/api/runs/x"), ("get", "/api/runs/x/graph"), ("get", "/api/tasks/x_1/logs"),
     ("get", "/api/queues"), ("post", "/api/queues/q/purge"), ("get", "/api/agents")],
)  # fmt: skip
def test_anonymous_is_401_when_security_is_on(api, settings, method, path):
    settings.ORCH_SECURITY_ENABLED = True
    assert_error(getattr(api, method)(path, {}, format="json"), 401, "not_authenticated")


def test_role_matrix_for_scheduling_cancel_rerun_and_purge(api, settings, diamond):
    settings.ORCH_SECURITY_ENABLED = True
    viewer, operator, admin = api_key("viewer"), api_key("operator"), api_key("admin")
    assert api.get("/api/runs", HTTP_X_API_KEY=viewer).status_code == 200
    assert api.get("/api/queues", HTTP_X_API_KEY=viewer).status_code == 200
    assert_error(
        api.post("/api/schedule-dag", {"dag_id": diamond}, format="json", HTTP_X_API_KEY=viewer),
        403,
        "permission_denied",
    )
    assert_error(
        api.post("/api/schedule-task", {"task_id": "a"}, format="json", HTTP_X_API_KEY=viewer),
        403,
        "permission_denied",
    )
    run_id = api.post(
        "/api/schedule-dag", {"dag_id": diamond}, format="json", HTTP_X_API_KEY=operator
    ).json()["run_id"]
    assert_error(api.post(f"/api/cancel-run/{run_id}", HTTP_X_API_KEY=viewer), 403, "permission_denied")
    assert api.post(f"/api/cancel-run/{run_id}", HTTP_X_API_KEY=operator).status_code == 200
    assert_error(api.post(f"/api/rerun/{run_id}", HTTP_X_API_KEY=viewer), 403, "permission_denied")
    assert api.post(f"/api/rerun/{run_id}", HTTP_X_API_KEY=operator).status_code == 201
    assert_error(api.post("/api/queues/default/purge", HTTP_X_API_KEY=operator), 403, "permission_denied")
    assert api.post("/api/queues/default/purge", HTTP_X_API_KEY=admin).status_code == 200


def test_openapi_documents_the_orchestrator_endpoints(api):
    doc = api.get("/openapi.json").json()
    paths = doc["paths"]
    for path in ("/api/tasks", "/api/tasks/{task_id}", "/api/dags/{dag_id}", "/api/schedule-dag", "/api/schedule-task",
                 "/api/cancel-run/{run_id}", "/api/rerun/{run_id}", "/api/runs", "/api/runs/{run_id}/graph",
                 "/api/tasks/{task_run_id}/logs", "/api/agents", "/api/queues", "/api/queues/{queue_name}/purge",
                 "/api/contexts/{context_id}", "/api/parameter-sets/{parameter_set_id}"):  # fmt: skip
        assert path in paths, path
    body = paths["/api/schedule-dag"]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert body.endswith("/ScheduleDagInRequest")  # request components are split from responses
    schema = doc["components"]["schemas"]["ScheduleDagOut"]
    assert set(schema["properties"]) == {"success", "run_id", "status", "start_time", "tasks"}
    assert set(doc["components"]["schemas"]["GraphEdge"]["properties"]) == {"from", "to"}
