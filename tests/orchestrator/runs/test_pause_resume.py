"""Pause and resume a run on real agents: the running task run finishes, nothing else starts until
the run is resumed, and both are events delivered to webhooks."""

from __future__ import annotations

import json

import pytest

from orchestrator.events.models import Event
from orchestrator.runs import claim
from orchestrator.runs.models import TaskRun
from orchestrator.webhooks.services import events_dispatch
from tests.orchestrator.helpers import assert_error, put_dag, put_task, run_detail, tasks_by_id, wait_run
from tests.orchestrator.webhooks.receiver import Receiver
from tests.support.processes import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def post(api, path: str, status: int = 200) -> dict:
    response = api.post(path, {}, format="json")
    assert response.status_code == status, response.content
    return response.json()


def task_status(run_id: str, task_id: str) -> str:
    return TaskRun.objects.get(run_id=run_id, task_id=task_id).status


def test_pause_lets_the_running_task_finish_and_starts_nothing_until_resumed(
    agents, api, control_worker, tmp_path
):
    gate = tmp_path / "gate"
    put_task(api, "p_first", f"while [ ! -e {gate} ]; do sleep 0.05; done; echo first")
    put_task(api, "p_second", "echo second", dependencies=["p_first"])
    put_dag(api, "p_dag", ["p_first", "p_second"])
    with Receiver() as receiver:
        hook = {"name": "pause", "url": receiver.url + "/e", "secret": "s",
                "events": ["dag.paused", "dag.resumed"]}  # fmt: skip
        assert api.post("/api/webhooks", hook, format="json").status_code == 201
        run_id = api.post("/api/schedule-dag", {"dag_id": "p_dag"}, format="json").json()["run_id"]
        wait_for(lambda: task_status(run_id, "p_first") == "running", what="p_first to start")

        assert post(api, f"/api/runs/{run_id}/pause") == {
            "success": True,
            "run_id": run_id,
            "status": "paused",
        }
        assert run_detail(api, run_id)["status"] == "paused"
        assert post(api, f"/api/runs/{run_id}/pause")["status"] == "paused"  # pausing again changes nothing
        gate.touch()
        wait_for(lambda: task_status(run_id, "p_first") == "completed", what="the running task to finish")
        # the dependent became ready while paused: it waits, pending, and the run stays paused
        run = run_detail(api, run_id)
        assert run["status"] == "paused" and tasks_by_id(run)["p_second"]["status"] == "pending", run

        resumed = post(api, f"/api/runs/{run_id}/resume")
        assert resumed == {"success": True, "run_id": run_id, "status": "running"}
        run = wait_run(api, run_id)
        assert run["status"] == "completed", run
        assert tasks_by_id(run)["p_second"]["status"] == "completed"
        assert_error(api.post(f"/api/runs/{run_id}/pause", {}, format="json"), 409, "invalid_state")
        assert_error(api.post(f"/api/runs/{run_id}/resume", {}, format="json"), 409, "invalid_state")

        types = list(
            Event.objects.filter(run_id=run_id, type__startswith="dag.").values_list("type", flat=True)
        )
        assert types == ["dag.pending", "dag.running", "dag.paused", "dag.resumed", "dag.completed"], types
        resumed_event = Event.objects.get(run_id=run_id, type="dag.resumed")
        assert resumed_event.data["status"] == "running" and resumed_event.data["dag_id"] == "p_dag"

        events_dispatch()
        wait_for(lambda: len(receiver.received()) == 2, what="pause and resume webhooks")
        bodies = [json.loads(r.body) for r in receiver.received()]
        assert sorted(b["event"] for b in bodies) == ["dag.paused", "dag.resumed"]
        assert {b["data"]["run_id"] for b in bodies} == {run_id}


def test_a_queued_task_run_of_a_paused_run_is_not_claimed(api):
    """On a queue no agent serves, so the claim is made here: refused while paused, taken after."""
    put_task(api, "p_root", "echo root", queue="p_idle")
    scheduled = api.post("/api/schedule-task", {"task_id": "p_root"}, format="json").json()
    run_id, tr_id = scheduled["run_id"], scheduled["task_run_id"]
    assert task_status(run_id, "p_root") == "queued"
    assert post(api, f"/api/runs/{run_id}/pause")["status"] == "paused"
    assert claim.task_run_claim(task_run_id=tr_id, attempt=0, agent_id="here") is None
    assert api.get("/api/metrics").json()["runs"]["paused"] == 1
    assert api.get("/api/runs", {"status": "paused"}).json()["runs"][0]["run_id"] == run_id
    assert task_status(run_id, "p_root") == "queued"
    # not started yet: the resumed run is pending again
    assert post(api, f"/api/runs/{run_id}/resume")["status"] == "pending"
    execution = claim.task_run_claim(task_run_id=tr_id, attempt=0, agent_id="here")
    assert execution is not None and execution.command == "echo root"
    assert run_detail(api, run_id)["status"] == "running"


def test_cancel_of_a_paused_run_and_unknown_runs(agents, api, tmp_path):
    put_task(api, "p_long", f"while [ ! -e {tmp_path / 'never'} ]; do sleep 0.05; done")
    run_id = api.post("/api/schedule-task", {"task_id": "p_long"}, format="json").json()["run_id"]
    wait_for(lambda: task_status(run_id, "p_long") == "running", what="p_long to start")
    post(api, f"/api/runs/{run_id}/pause")
    cancelled = api.post(f"/api/cancel-run/{run_id}", {"force": True}, format="json")
    assert cancelled.status_code == 200, cancelled.content
    run = wait_run(api, run_id)
    assert run["status"] == "cancelled"
    wait_for(lambda: task_status(run_id, "p_long") == "cancelled", what="the command to be stopped")
    assert_error(api.post("/api/runs/no-such-run/pause", {}, format="json"), 404, "not_found")
    assert_error(api.post("/api/runs/no-such-run/resume", {}, format="json"), 404, "not_found")
