"""Helpers shared by the orchestrator's definitions/runs/agents tests: real API calls and real
agent processes (`manage_orch.py run_agent`) against the test database and Redis."""

from __future__ import annotations

import sys
import uuid

from orchestrator.security.models import ApiKey
from shared.auth import apikeys
from tests.support.processes import ServiceProcess, child_env, wait_for

TERMINAL = ("completed", "failed", "cancelled")


def assert_error(response, status: int, code: str, field: str | None = None) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert body["error"] is True and body["code"] == code and isinstance(body["message"], str), body
    assert isinstance(body["details"], dict)
    if field is not None:
        assert body["details"]["field"] == field, body
        assert any(e["field"] == field for e in body["details"]["errors"]), body
    return body


def api_key(role: str) -> str:
    key = apikeys.generate("ork")
    ApiKey.objects.create(
        name=f"{role}-{uuid.uuid4().hex[:8]}", role=role, prefix=key.prefix, key_hash=key.hashed
    )
    return key.plaintext


def put_task(api, task_id: str, command: str = "true", **fields) -> dict:
    response = api.put(f"/api/tasks/{task_id}", {"command": command, **fields}, format="json")
    assert response.status_code in (200, 201), response.content
    return response.json()


def put_dag(api, dag_id: str, tasks: list, **fields) -> dict:
    response = api.put(f"/api/dags/{dag_id}", {"tasks": tasks, **fields}, format="json")
    assert response.status_code in (200, 201), response.content
    return response.json()


def run_detail(api, run_id: str, **query) -> dict:
    response = api.get(f"/api/runs/{run_id}", {"include_tasks": "true", **query})
    assert response.status_code == 200, response.content
    return response.json()


def wait_run(api, run_id: str, *, timeout: float = 30, statuses=TERMINAL) -> dict:
    def done():
        body = run_detail(api, run_id)
        return body if body["status"] in statuses else None

    return wait_for(done, timeout=timeout, what=f"run {run_id} to reach {statuses}")


def progress(run_id: str) -> tuple[int, int]:
    """The run's counter of unfinished task runs, and how many of its task runs are not completed:
    the two are equal whenever no completion is under way (runs.models.RunProgress)."""
    from orchestrator.runs.models import COMPLETED, RunProgress, TaskRun

    counted = RunProgress.objects.get(run_id=run_id).unfinished
    return counted, TaskRun.objects.filter(run_id=run_id).exclude(status=COMPLETED).count()


def tasks_by_id(run: dict) -> dict[str, dict]:
    return {t["task_id"]: t for t in run["tasks"]}


def start_agent(
    name: str,
    queues: str,
    env: dict[str, str],
    *,
    concurrency: int = 2,
    extra_args: tuple[str, ...] = ("--no-control",),
) -> ServiceProcess:
    args = [sys.executable, "manage_orch.py", "run_agent", "--queues", queues, "--name", name,
            "--concurrency", str(concurrency), *extra_args]  # fmt: skip
    agent_env = {
        "ORCH_AGENT_HEARTBEAT_SECONDS": "1",
        "ORCH_TASK_CANCEL_POLL_SECONDS": "0.2",
        "ORCH_TASK_LOG_FLUSH_SECONDS": "0.2",
        "ORCH_AGENT_TAGS": "zone:test,role:agent",
        **env,
    }
    return ServiceProcess(name, args, child_env(agent_env))


def wait_agent_ready(agent: ServiceProcess, timeout: float = 60) -> None:
    """Ready when Celery says so in its log (the heartbeat row alone does not prove consumption)."""
    wait_for(
        lambda: "ready." in agent.log_text() or not agent.alive(), timeout=timeout, what=f"{agent.name} ready"
    )
    assert agent.alive(), agent.log_text()


def stop_agents(procs, django_db_blocker) -> None:
    """Stops the processes, then deletes their heartbeat rows and events: a fixture that outlives
    a test's database flush must not leave agents behind for the next test file."""
    from orchestrator.agents.models import Agent
    from orchestrator.events.models import Event

    for proc in procs:
        proc.stop()
    with django_db_blocker.unblock():
        for proc in procs:
            Agent.objects.filter(agent_id__startswith=f"{proc.name}@").delete()
            Event.objects.filter(
                type__startswith="agent.", data__agent_id__startswith=f"{proc.name}@"
            ).delete()
