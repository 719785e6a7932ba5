"""Kill -9 an agent while its task runs: the sweeper recovers the task run."""

from __future__ import annotations

import uuid

import pytest

from orchestrator.agents.services import agents_sweep
from orchestrator.events.models import Event
from orchestrator.runs.models import TaskRun
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


@pytest.fixture
def kill_queue_agents(subprocess_env, django_db_blocker):
    token = uuid.uuid4().hex[:6]
    queue = f"killq-{token}"
    procs = {
        name: start_agent(name, queue, subprocess_env, concurrency=1)
        for name in (f"k1-{token}", f"k2-{token}")
    }
    try:
        for proc in procs.values():
            wait_agent_ready(proc)
        yield queue, procs
    finally:
        stop_agents(procs.values(), django_db_blocker)


def test_sweeper_recovers_a_task_run_whose_agent_was_killed(kill_queue_agents, api, settings):
    queue, procs = kill_queue_agents
    settings.AGENT_STALE_SECONDS = 3
    put_task(api, "victim", "sleep 2; echo survived", queue=queue)
    response = api.post("/api/schedule-task", {"task_id": "victim", "retries": 1}, format="json")
    run_id, tr_id = response.json()["run_id"], response.json()["task_run_id"]

    holder = wait_for(lambda: TaskRun.objects.filter(pk=tr_id, status="running").values_list("agent_id", flat=True).first(),
                      timeout=20, what="victim to start")  # fmt: skip
    victim_agent = next(p for name, p in procs.items() if holder.startswith(name + "@"))
    victim_agent.kill()  # SIGKILL to the worker's whole process group
    victim_agent.proc.wait(timeout=10)

    # The sweeper (called here as the beat task would) recovers it once the agent is stale.
    wait_for(lambda: agents_sweep()["task_runs_recovered"] or TaskRun.objects.get(pk=tr_id).attempts > 1,
             timeout=20, interval=0.5, what="sweeper to recover the task run")  # fmt: skip
    run = wait_run(api, run_id, timeout=30)
    assert run["status"] == "completed", run
    task = tasks_by_id(run)["victim"]
    assert task["attempts"] == 2
    survivor = TaskRun.objects.get(pk=tr_id).agent_id
    assert survivor != holder
    assert "stopped responding" in api.get(f"/api/tasks/{tr_id}/logs").json()["logs"]
    assert not TaskRun.objects.filter(status="running").exists()
    # agent.offline is emitted exactly once, however often the sweeper runs
    agents_sweep()
    assert Event.objects.filter(type="agent.offline", data__agent_id=holder).count() == 1
    agents = {a["agent_id"]: a for a in api.get("/api/agents").json()["agents"]}
    assert agents[holder]["status"] == "offline" and agents[survivor]["status"] == "active"


def test_without_attempts_left_the_recovered_task_run_fails_the_run(kill_queue_agents, api, settings):
    queue, procs = kill_queue_agents
    settings.AGENT_STALE_SECONDS = 3
    put_task(api, "victim2", "sleep 2", queue=queue)
    response = api.post("/api/schedule-task", {"task_id": "victim2"}, format="json")
    run_id, tr_id = response.json()["run_id"], response.json()["task_run_id"]
    holder = wait_for(lambda: TaskRun.objects.filter(pk=tr_id, status="running").values_list("agent_id", flat=True).first(),
                      timeout=20, what="victim2 to start")  # fmt: skip
    next(p for name, p in procs.items() if holder.startswith(name + "@")).kill()
    wait_for(lambda: agents_sweep()["task_runs_recovered"], timeout=20, interval=0.5, what="recovery")
    run = wait_run(api, run_id)
    assert run["status"] == "failed"
    assert tasks_by_id(run)["victim2"]["status"] == "failed"


def test_a_gracefully_stopped_agent_is_offline_at_once(subprocess_env, django_db_blocker, api):
    from orchestrator.agents.models import Agent

    name = f"graceful-{uuid.uuid4().hex[:6]}"
    proc = start_agent(name, f"q-{name}", subprocess_env, concurrency=1)
    try:
        wait_agent_ready(proc)
        agent_id = wait_for(
            lambda: (
                Agent.objects.filter(agent_id__startswith=name + "@").values_list("pk", flat=True).first()
            ),
            what="heartbeat",
        )
        assert {a["agent_id"]: a["status"] for a in api.get("/api/agents").json()["agents"]}[
            agent_id
        ] == "active"
        proc.stop()  # SIGTERM: Celery's warm shutdown
        assert Agent.objects.get(pk=agent_id).status == "offline"
        assert Event.objects.filter(type="agent.offline", data__agent_id=agent_id).count() == 1
    finally:
        stop_agents([proc], django_db_blocker)


def test_a_task_run_of_a_killed_agent_is_recovered_when_it_restarts_under_the_same_name(
    subprocess_env, django_db_blocker, api, settings
):
    """A supervisor restarts a killed agent at once under its old name: the new process heartbeats
    for the same agent id, yet the attempt the dead process held is retried (and completes)."""
    from orchestrator.agents.models import AgentSession

    settings.AGENT_STALE_SECONDS = 3
    name = f"phoenix-{uuid.uuid4().hex[:6]}"
    queue = f"q-{name}"
    first = start_agent(name, queue, subprocess_env, concurrency=1)
    procs = [first]
    try:
        wait_agent_ready(first)
        # The first attempt would outlast the test; the retry finishes at once.
        put_task(api, "phoenix", '[ "$ORCH_ATTEMPT" -gt 1 ] || sleep 60; echo reborn', queue=queue)
        response = api.post("/api/schedule-task", {"task_id": "phoenix", "retries": 1}, format="json")
        run_id, tr_id = response.json()["run_id"], response.json()["task_run_id"]
        wait_for(lambda: TaskRun.objects.filter(pk=tr_id, status="running").exists(), timeout=20,
                 what="first attempt to start")  # fmt: skip
        held = TaskRun.objects.get(pk=tr_id)
        assert held.agent_session

        first.kill()
        first.proc.wait(timeout=10)
        second = start_agent(name, queue, subprocess_env, concurrency=1)
        procs.append(second)
        wait_agent_ready(second)
        # The new process heartbeats under the very same agent id, as a new session.
        wait_for(lambda: AgentSession.objects.filter(agent_id=held.agent_id).exclude(pk=held.agent_session)
                 .exists(), what="the restarted agent's heartbeat")  # fmt: skip

        wait_for(lambda: agents_sweep()["task_runs_recovered"] or TaskRun.objects.get(pk=tr_id).attempts > 1,
                 timeout=20, interval=0.5, what="sweeper to recover the dead process's attempt")  # fmt: skip
        run = wait_run(api, run_id, timeout=30)
        assert run["status"] == "completed", run
        retried = TaskRun.objects.get(pk=tr_id)
        assert retried.attempts == 2 and retried.agent_id == held.agent_id
        assert retried.agent_session not in ("", None, held.agent_session)
        logs = api.get(f"/api/tasks/{tr_id}/logs").json()["logs"]
        assert "stopped responding" in logs and "reborn" in logs
        agents = {a["agent_id"]: a for a in api.get("/api/agents").json()["agents"]}
        assert agents[held.agent_id]["status"] == "active"
    finally:
        stop_agents(procs, django_db_blocker)
