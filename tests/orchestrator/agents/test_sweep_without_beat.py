"""No beat process: an agent killed with SIGKILL mid-task is recovered by the sweep another live
agent runs on its own."""

from __future__ import annotations

import uuid

import pytest

from orchestrator.runs.models import TaskRun
from orchestrator.system.models import SweepState
from tests.orchestrator.helpers import (
    put_task,
    start_agent,
    stop_agents,
    tasks_by_id,
    wait_agent_ready,
    wait_run,
)
from tests.support.processes import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

FAST_RECOVERY = {"ORCH_AGENT_STALE_SECONDS": "3", "ORCH_SWEEP_INTERVAL_SECONDS": "0.5"}


@pytest.fixture
def two_agents(subprocess_env, django_db_blocker):
    token = uuid.uuid4().hex[:6]
    queue = f"nobeat-{token}"
    env = {**subprocess_env, **FAST_RECOVERY}
    procs = {name: start_agent(name, queue, env, concurrency=1) for name in (f"nb1-{token}", f"nb2-{token}")}
    try:
        for proc in procs.values():
            wait_agent_ready(proc)
        yield queue, procs
    finally:
        stop_agents(procs.values(), django_db_blocker)


def test_a_killed_agents_task_run_is_recovered_by_another_agent_without_beat(two_agents, api):
    queue, procs = two_agents
    put_task(api, "nobeat", "sleep 3; echo survived", queue=queue)
    response = api.post("/api/schedule-task", {"task_id": "nobeat", "retries": 1}, format="json")
    run_id, tr_id = response.json()["run_id"], response.json()["task_run_id"]
    holder = wait_for(lambda: TaskRun.objects.filter(pk=tr_id, status="running").values_list("agent_id", flat=True).first(),
                      timeout=30, what="the task run to start")  # fmt: skip
    victim = next(p for name, p in procs.items() if holder.startswith(name + "@"))
    victim.kill()  # SIGKILL to the agent's process group: its main process and its pool children
    victim.proc.wait(timeout=10)

    # Nobody in this test calls the sweeper and no beat runs: the surviving agent does it.
    run = wait_run(api, run_id, timeout=60)
    assert run["status"] == "completed", run
    assert tasks_by_id(run)["nobeat"]["attempts"] == 2
    survivor = TaskRun.objects.get(pk=tr_id).agent_id
    assert survivor != holder
    assert "stopped responding" in api.get(f"/api/tasks/{tr_id}/logs").json()["logs"]
    assert SweepState.objects.get(name="recovery").last_run_by == survivor
