"""Task definitions, DAGs, contexts and parameter sets through the HTTP API."""

from __future__ import annotations

import pytest

from tests.orchestrator.helpers import api_key, assert_error, put_dag, put_task

pytestmark = pytest.mark.django_db

ISO_Z = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"


def test_task_put_creates_then_updates_and_get_returns_every_field(api):
    response = api.put(
        "/api/tasks/extract",
        {
            "name": "Extract",
            "description": "pull data",
            "command": "echo ${X}",
            "parameters": {"X": "1", "N": 5},
            "queue": "etl",
        },
        format="json",
    )
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {
        "id",
        "name",
        "description",
        "command",
        "dependencies",
        "parameters",
        "allowed_env",
        "queue",
        "pool",
        "version",
        "created_at",
        "updated_at",
    }
    assert (
        body["parameters"] == {"X": "1", "N": "5"} and body["dependencies"] == [] and body["queue"] == "etl"
    )
    assert body["allowed_env"] is None  # not declared
    import re

    assert re.match(ISO_Z, body["created_at"]) and re.match(ISO_Z, body["updated_at"])
    response = api.put("/api/tasks/extract", {"command": "true"}, format="json")
    assert response.status_code == 200
    updated = response.json()
    assert (
        updated["name"] == "extract"
        and updated["queue"] == "default"
        and updated["created_at"] == body["created_at"]
    )
    assert api.get("/api/tasks/extract").json() == updated


def test_task_list_shape_filter_queue_sort_and_paging(api):
    for tid, queue in (("alpha", "q1"), ("beta", "q2"), ("gamma", "q1")):
        put_task(api, tid, queue=queue, name=tid.upper())
    body = api.get("/api/tasks").json()
    assert set(body) == {"tasks", "total", "limit", "offset"}
    assert (body["total"], body["limit"], body["offset"]) == (3, 50, 0)
    assert set(body["tasks"][0]) == {
        "id",
        "name",
        "description",
        "command",
        "dependencies",
        "parameters",
        "allowed_env",
        "queue",
        "pool",
        "version",
    }
    assert [t["id"] for t in api.get("/api/tasks", {"queue": "q1"}).json()["tasks"]] == ["alpha", "gamma"]
    assert [t["id"] for t in api.get("/api/tasks", {"filter": "amm"}).json()["tasks"]] == ["gamma"]
    assert [t["id"] for t in api.get("/api/tasks", {"filter": "*ta"}).json()["tasks"]] == ["beta"]
    assert [t["id"] for t in api.get("/api/tasks", {"sort": "id:desc"}).json()["tasks"]] == [
        "gamma",
        "beta",
        "alpha",
    ]
    page = api.get("/api/tasks", {"limit": 1, "offset": 1}).json()
    assert [t["id"] for t in page["tasks"]] == ["beta"] and page["total"] == 3
    assert_error(api.get("/api/tasks", {"sort": "colour:asc"}), 400, "validation_error", "sort")
    assert_error(api.get("/api/tasks", {"sort": "id:sideways"}), 400, "validation_error", "sort")
    assert_error(api.get("/api/tasks", {"limit": 501}), 400, "validation_error", "limit")
    assert api.get("/api/tasks", {"limit": 500}).status_code == 200


def test_task_validation_errors_list_every_problem(api):
    body = assert_error(
        api.put("/api/tasks/bad", {"dependencies": "x", "parameters": {"1X": "a"}}, format="json"),
        400,
        "validation_error",
    )
    fields = {e["field"] for e in body["details"]["errors"]}
    assert fields == {"command", "dependencies", "parameters.1X"}
    assert_error(
        api.put("/api/tasks/t", {"command": "true", "dependencies": ["ghost"]}, format="json"),
        400,
        "validation_error",
        "dependencies",
    )
    assert_error(
        api.put("/api/tasks/has space", {"command": "true"}, format="json"),
        400,
        "validation_error",
        "task_id",
    )
    assert_error(
        api.put("/api/tasks/t", data="{bad", content_type="application/json"), 400, "validation_error"
    )
    assert_error(api.put("/api/tasks/t", [1, 2], format="json"), 400, "validation_error")


def test_dependency_cycles_are_rejected(api):
    put_task(api, "a")
    put_task(api, "b", dependencies=["a"])
    put_task(api, "c", dependencies=["b"])
    body = assert_error(
        api.put("/api/tasks/a", {"command": "true", "dependencies": ["c"]}, format="json"),
        400,
        "validation_error",
        "dependencies",
    )
    assert "dependency cycle: a -> c -> b -> a" in body["message"]
    assert_error(
        api.put("/api/tasks/a", {"command": "true", "dependencies": ["a"]}, format="json"),
        400,
        "validation_error",
        "dependencies",
    )
    assert api.get("/api/tasks/a").json()["dependencies"] == []


def test_delete_task_referenced_is_409_and_unknown_is_404(api):
    put_task(api, "base")
    put_task(api, "user", dependencies=["base"])
    put_dag(api, "d", ["base"])
    body = assert_error(api.delete("/api/tasks/base"), 409, "invalid_state")
    assert "task user" in body["message"] and "DAG d" in body["message"]
    assert api.delete("/api/dags/d").json() == {"success": True, "message": "DAG d deleted."}
    assert api.delete("/api/tasks/user").json()["success"] is True
    assert api.delete("/api/tasks/base").status_code == 200
    assert_error(api.delete("/api/tasks/base"), 404, "not_found")
    assert_error(api.get("/api/tasks/base"), 404, "not_found")


def test_dag_crud_list_and_detail_views(api):
    put_task(api, "t1")
    put_task(api, "t2", dependencies=["t1"])
    api.put("/api/contexts/ctx", {"variables": {"A": "1"}}, format="json")
    response = api.put(
        "/api/dags/pipeline",
        {
            "name": "Pipeline",
            "description": "d",
            "tasks": [{"id": "t1", "parameters": {"P": "x"}}, {"id": "t2"}],
            "context": "ctx",
            "tags": ["etl"],
        },
        format="json",
    )
    assert response.status_code == 201
    detail = api.get("/api/dags/pipeline").json()
    assert detail["tasks"] == [{"id": "t1", "parameters": {"P": "x"}}, {"id": "t2", "parameters": {}}]
    assert set(detail) == {
        "id",
        "name",
        "description",
        "tasks",
        "context",
        "tags",
        "max_active_runs",
        "version",
        "created_at",
        "updated_at",
    }
    listing = api.get("/api/dags").json()
    assert (
        listing["total"] == 1
        and listing["dags"][0]["tasks"] == ["t1", "t2"]
        and listing["dags"][0]["tags"] == ["etl"]
    )
    assert api.get("/api/dags", {"filter": "nope"}).json()["total"] == 0
    assert_error(api.get("/api/dags", {"sort": "bogus:asc"}), 400, "validation_error", "sort")
    assert api.put("/api/dags/pipeline", {"tasks": ["t1"]}, format="json").status_code == 200
    assert_error(api.get("/api/dags/missing"), 404, "not_found")
    assert_error(api.delete("/api/dags/missing"), 404, "not_found")


def test_dag_validation(api):
    put_task(api, "t1")
    assert_error(
        api.put("/api/dags/x", {"tasks": ["t1", "ghost"]}, format="json"), 400, "validation_error", "tasks"
    )
    assert_error(api.put("/api/dags/x", {"tasks": []}, format="json"), 400, "validation_error", "tasks")
    assert_error(
        api.put("/api/dags/x", {"tasks": ["t1"], "context": "nope"}, format="json"),
        400,
        "validation_error",
        "context",
    )
    assert_error(
        api.put("/api/dags/x", {"tasks": ["t1", "t1"]}, format="json"), 400, "validation_error", "tasks"
    )


def test_contexts_extends_and_cycles(api):
    response = api.put("/api/contexts/base", {"variables": {"A": "1", "B": "1"}}, format="json")
    assert response.status_code == 201
    assert set(response.json()) == {"id", "variables", "extends", "created_at", "updated_at"}
    api.put("/api/contexts/child", {"variables": {"B": "2"}, "extends": "base"}, format="json")
    assert api.get("/api/contexts/child").json()["extends"] == "base"
    assert api.get("/api/contexts").json()["contexts"] == [
        {"id": "base", "variables": {"A": "1", "B": "1"}, "extends": None},
        {"id": "child", "variables": {"B": "2"}, "extends": "base"},
    ]
    body = assert_error(
        api.put("/api/contexts/base", {"variables": {}, "extends": "child"}, format="json"),
        400,
        "validation_error",
        "extends",
    )
    assert "cycle" in body["message"]
    assert api.get("/api/contexts/base").json()["extends"] is None  # rolled back
    assert_error(
        api.put("/api/contexts/x", {"extends": "ghost"}, format="json"), 400, "validation_error", "extends"
    )
    assert_error(api.get("/api/contexts/ghost"), 404, "not_found")


def test_parameter_sets(api):
    response = api.put("/api/parameter-sets/nightly", {"parameters": {"DATE": "2026-11-22"}}, format="json")
    assert response.status_code == 201
    assert set(response.json()) == {"id", "parameters", "created_at", "updated_at"}
    assert api.get("/api/parameter-sets").json()["parameter_sets"] == [
        {"id": "nightly", "parameters": {"DATE": "2026-11-22"}}
    ]
    assert api.get("/api/parameter-sets/nightly").json()["parameters"] == {"DATE": "2026-11-22"}
    assert_error(
        api.put("/api/parameter-sets/x", {"parameters": "no"}, format="json"),
        400,
        "validation_error",
        "parameters",
    )
    assert_error(api.get("/api/parameter-sets/ghost"), 404, "not_found")


@pytest.mark.parametrize(
    "method,path",
    [("get", "/api/tasks"), ("get", "/api/tasks/t"), ("put", "/api/tasks/t"), ("delete", "/api/tasks/t"), ("get", "/api/dags"),
     ("put", "/api/dags/d"), ("get", "/api/contexts"), ("put", "/api/contexts/c"), ("get", "/api/parameter-sets"),
     ("put", "/api/parameter-sets/p")],
)  # fmt: skip
def test_anonymous_is_401_when_security_is_on(api, settings, method, path):
    settings.ORCH_SECURITY_ENABLED = True
    assert_error(getattr(api, method)(path, {}, format="json"), 401, "not_authenticated")


def test_viewer_reads_but_cannot_write_and_admin_can(api, settings):
    settings.ORCH_SECURITY_ENABLED = True
    put_task_body = {"command": "true"}
    viewer, operator, admin = api_key("viewer"), api_key("operator"), api_key("admin")
    assert api.get("/api/tasks", HTTP_X_API_KEY=viewer).status_code == 200
    for key in (viewer, operator):
        assert_error(
            api.put("/api/tasks/t", put_task_body, format="json", HTTP_X_API_KEY=key),
            403,
            "permission_denied",
        )
        assert_error(
            api.put("/api/dags/d", {"tasks": ["t"]}, format="json", HTTP_X_API_KEY=key),
            403,
            "permission_denied",
        )
        assert_error(
            api.put("/api/contexts/c", {}, format="json", HTTP_X_API_KEY=key), 403, "permission_denied"
        )
        assert_error(
            api.put("/api/parameter-sets/p", {}, format="json", HTTP_X_API_KEY=key), 403, "permission_denied"
        )
    assert api.put("/api/tasks/t", put_task_body, format="json", HTTP_X_API_KEY=admin).status_code == 201
    assert_error(api.delete("/api/tasks/t", HTTP_X_API_KEY=operator), 403, "permission_denied")
    assert api.delete("/api/tasks/t", HTTP_X_API_KEY=admin).status_code == 200
