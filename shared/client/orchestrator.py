"""A typed client of the orchestrator's API: runs, scheduling, logs, webhooks and the
definitions plan. Authenticates with an API key (`X-API-Key`)."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from shared.client.base import ApiError, HttpxTransport, JsonClient, Transport, path, with_query

TERMINAL = ("completed", "failed", "cancelled")


class TaskRun(TypedDict):
    task_id: str
    task_run_id: str
    status: str
    start_time: str | None
    end_time: str | None
    logs: NotRequired[str]


class Run(TypedDict):
    run_id: str
    dag_id: str | None
    status: str
    start_time: str | None
    end_time: str | None
    task_count: int
    completed_tasks: int
    failed_tasks: int
    tasks: NotRequired[list[TaskRun]]


class RunPage(TypedDict):
    runs: list[Run]
    total: int
    limit: int
    offset: int


class OrchestratorClient:
    def __init__(self, base_url: str, api_key: str = "", *, transport: Transport | None = None) -> None:
        headers = {"X-API-Key": api_key} if api_key else {}
        self.http = JsonClient(base_url, headers, transport or HttpxTransport())

    # --- runs ---------------------------------------------------------------------------------

    def runs_list(
        self, *, status: str | None = None, dag_id: str | None = None, limit: int = 50, offset: int = 0
    ) -> RunPage:
        query = {
            "status": status,
            "dag_id": dag_id,
            "limit": limit,
            "offset": offset,
            "sort": "start_time:desc",
        }
        return self.http.call("GET", with_query("/api/runs", query))

    def run_get(self, run_id: str, *, include_tasks: bool = True, include_logs: bool = False) -> Run:
        query = {"include_tasks": include_tasks or None, "include_logs": include_logs or None}
        return self.http.call("GET", with_query(path("api", "runs", run_id), query))

    def schedule(
        self, target: str, target_id: str, *, run_id: str | None = None,
        parameters: dict[str, Any] | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Schedules a run of the DAG (`target` dag) or the single task (task); ApiError 409 when `run_id` is taken."""
        body: dict[str, Any] = {f"{target}_id": target_id, "parameters": parameters or {}}
        if run_id:
            body["run_id"] = run_id
        return self.http.call("POST", f"/api/schedule-{target}", body)

    def run_cancel(self, run_id: str) -> dict[str, Any]:
        return self.http.call("POST", path("api", "cancel-run", run_id))

    def run_rerun(self, run_id: str, *, failed_only: bool = False) -> dict[str, Any]:
        body = {"failed_only": True} if failed_only else {}
        return self.http.call("POST", path("api", "rerun", run_id), body)

    def task_logs(self, task_run_id: str) -> dict[str, Any]:
        return self.http.call("GET", path("api", "tasks", task_run_id, "logs"))

    # --- webhooks and definitions --------------------------------------------------------------

    def webhooks_list(self) -> list[dict[str, Any]]:
        return list(self.http.call("GET", "/api/webhooks?limit=500").get("webhooks", []))

    def webhook_create(self, *, name: str, url: str, events: list[str], secret: str) -> dict[str, Any]:
        body = {"name": name, "url": url, "events": events, "secret": secret}
        return self.http.call("POST", "/api/webhooks", body)

    def definitions_plan(self, files: list[dict[str, str]], *, prune: bool = False) -> dict[str, Any]:
        """The dry run of a definitions sync of these files ({name, content} each)."""
        return self.http.call("POST", "/api/definitions/plan", {"files": files, "prune": prune})


__all__ = ["TERMINAL", "ApiError", "OrchestratorClient", "Run", "RunPage", "TaskRun"]
