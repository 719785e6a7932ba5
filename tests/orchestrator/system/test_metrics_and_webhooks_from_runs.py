"""Real runs on a real agent: /api/metrics, /api/status and Prometheus figures move, and the events
the run emitted reach a webhook receiver with the documented payload."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import uuid

import pytest

from orchestrator.webhooks.models import Delivery
from orchestrator.webhooks.services import events_dispatch
from tests.orchestrator.helpers import put_task, start_agent, stop_agents, wait_agent_ready, wait_run
from tests.orchestrator.webhooks.receiver import Receiver
from tests.support.processes import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


@pytest.fixture(scope="module")
def agent(subprocess_env, django_db_blocker):
    proc = start_agent(f"sysagent-{uuid.uuid4().hex[:6]}", "sysq", subprocess_env, concurrency=1)
    try:
        wait_agent_ready(proc)
        yield proc
    finally:
        stop_agents([proc], django_db_blocker)


def prom_value(text: str, sample: str) -> float:
    match = re.search(rf"^{re.escape(sample)} ([0-9.e+]+)$", text, re.M)
    assert match, f"{sample} not exported"
    return float(match.group(1))


def schedule(api, task_id: str) -> str:
    response = api.post("/api/schedule-task", {"task_id": task_id}, format="json")
    assert response.status_code in (200, 201), response.content
    return response.json()["run_id"]


def test_counters_status_and_webhooks_after_runs(api, agent, control_worker):
    before = api.get("/api/metrics").json()
    with Receiver() as receiver:
        created = api.post(
            "/api/webhooks",
            {"name": "all", "url": receiver.url + "/e", "secret": "run-secret",
             "events": ["task.pending", "task.queued", "task.running", "task.completed", "task.failed",
                        "dag.pending", "dag.running", "dag.completed", "dag.failed"],
             "filters": {"task_id": "sys_ok"}},
            format="json",
        )  # fmt: skip
        assert created.status_code == 201, created.content
        put_task(api, "sys_ok", "echo hello", queue="sysq")
        put_task(api, "sys_bad", "exit 3", queue="sysq")
        ok_run, bad_run = schedule(api, "sys_ok"), schedule(api, "sys_bad")
        assert wait_run(api, ok_run)["status"] == "completed"
        assert wait_run(api, bad_run)["status"] == "failed"

        after = api.get("/api/metrics").json()
        for group, status in (
            ("tasks", "completed"),
            ("tasks", "failed"),
            ("runs", "completed"),
            ("runs", "failed"),
        ):
            assert after[group][status] == before[group][status] + 1, (group, status, after)
        assert after["tasks"]["total"] == before["tasks"]["total"] + 2
        assert after["performance"]["tasks_per_minute"] > 0
        assert isinstance(after["performance"]["average_task_duration_seconds"], float)
        assert isinstance(after["performance"]["average_dag_duration_seconds"], float)

        agents = api.get("/api/status").json()["components"]["agents"]
        assert agents["active"] >= 1 and agents["count"] >= 1

        text = api.get("/metrics").content.decode()
        assert prom_value(text, 'orchestrator_task_runs_finished_total{status="completed"}') >= 1
        assert prom_value(text, 'orchestrator_runs_finished_total{status="failed"}') >= 1
        assert prom_value(text, "orchestrator_task_run_duration_seconds_count") >= 2

        # The run's own outbox events, dispatched (as the periodic job would) and delivered.
        events_dispatch()

        def received_types():
            return [json.loads(r.body)["event"] for r in receiver.received()]

        wait_for(lambda: "task.completed" in received_types(), what="run events delivered")
        wait_for(
            lambda: not Delivery.objects.exclude(status="succeeded").exists(), what="deliveries recorded"
        )
        types = received_types()
        # filtered to task sys_ok: no events of the failing task, and no dag.* (they name no task)
        assert not [t for t in types if t == "task.failed" or t.startswith("dag.")]
        assert {"task.pending", "task.queued", "task.running"} <= set(types)
        for request in receiver.received():
            digest = hmac.new(b"run-secret", request.body, hashlib.sha256).hexdigest()
            assert request.headers["X-Service-Signature"] == f"sha256={digest}"
        completed = next(
            json.loads(r.body) for r in receiver.received() if json.loads(r.body)["event"] == "task.completed"
        )
        data = completed["data"]
        assert data["run_id"] == ok_run and data["task_id"] == "sys_ok" and data["status"] == "completed"
        assert data["task_run_id"].startswith("sys_ok_") and data["dag_id"] is None
        assert data["start_time"].endswith("Z") and data["end_time"].endswith("Z")
        assert isinstance(data["duration_seconds"], int)
