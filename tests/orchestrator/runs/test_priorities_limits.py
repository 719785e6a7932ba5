"""Priorities, max_active_runs and pools on real agents. Peak concurrency is measured from the task
runs' own start and end times, so a limit exceeded even for a moment fails the test."""

from __future__ import annotations

import uuid
from datetime import datetime

import pytest

from orchestrator.agents.services import agents_sweep
from orchestrator.runs.models import Run, TaskRun
from tests.orchestrator.helpers import put_dag, put_task, start_agent, stop_agents, wait_agent_ready, wait_run
from tests.support.processes import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def _agents(count: int, concurrency: int, subprocess_env, django_db_blocker, prefix: str):
    token = uuid.uuid4().hex[:6]
    queue = f"{prefix}-{token}"
    procs = [
        start_agent(f"{prefix}{i}-{token}", queue, subprocess_env, concurrency=concurrency)
        for i in range(count)
    ]
    return queue, procs


@pytest.fixture(scope="module")
def four_agents(subprocess_env, django_db_blocker):
    queue, procs = _agents(4, 2, subprocess_env, django_db_blocker, "lim")
    try:
        for proc in procs:
            wait_agent_ready(proc)
        yield queue
    finally:
        stop_agents(procs, django_db_blocker)


@pytest.fixture
def single_slot_agent(subprocess_env, django_db_blocker):
    queue, procs = _agents(1, 1, subprocess_env, django_db_blocker, "prio")
    try:
        wait_agent_ready(procs[0])
        yield queue
    finally:
        stop_agents(procs, django_db_blocker)


@pytest.fixture
def two_agents(subprocess_env, django_db_blocker):
    queue, procs = _agents(2, 1, subprocess_env, django_db_blocker, "kpool")
    try:
        for proc in procs:
            wait_agent_ready(proc)
        yield queue, procs
    finally:
        stop_agents(procs, django_db_blocker)


def peak(intervals: list[tuple[datetime, datetime]]) -> int:
    """Most intervals open at once; one ending at the instant another starts does not overlap it."""
    edges = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    open_now = highest = 0
    for _, step in edges:  # at equal times -1 sorts first: an end frees its place before a start
        open_now += step
        highest = max(highest, open_now)
    return highest


def schedule(api, path: str, body: dict) -> str:
    response = api.post(path, body, format="json")
    assert response.status_code == 201, response.content
    return response.json()["run_id"]


def test_one_agent_runs_the_queue_by_priority(single_slot_agent, api, tmp_path):
    queue = single_slot_agent
    gate = tmp_path / "gate"
    put_task(api, "prio_block", f"while [ ! -e {gate} ]; do sleep 0.05; done", queue=queue)
    put_task(api, "prio_job", "echo job", queue=queue)
    blocker = schedule(api, "/api/schedule-task", {"task_id": "prio_block"})
    wait_for(lambda: TaskRun.objects.get(run_id=blocker).status == "running", what="the blocker to start")
    priorities = [1, 5, 3, 0, 10, -2, 5]
    run_ids = [
        schedule(api, "/api/schedule-task", {"task_id": "prio_job", "priority": p, "run_id": f"prio-{i}-{p}"})
        for i, p in enumerate(priorities)
    ]
    assert api.get(f"/api/runs/{run_ids[1]}").json()["priority"] == 5
    gate.touch()
    for run_id in run_ids:
        assert wait_run(api, run_id)["status"] == "completed"
    started = (
        TaskRun.objects.filter(run_id__in=run_ids)
        .order_by("start_time")
        .values_list("run__run_id", flat=True)
    )
    # highest first; equal priorities in the order they were queued
    assert list(started) == [
        "prio-4-10",
        "prio-1-5",
        "prio-6-5",
        "prio-2-3",
        "prio-0-1",
        "prio-3-0",
        "prio-5--2",
    ]


def test_max_active_runs_is_never_exceeded_by_four_agents(four_agents, api):
    put_task(api, "mar_task", "sleep 0.5", queue=four_agents)
    put_dag(api, "mar_dag", ["mar_task"], max_active_runs=2)
    run_ids = [schedule(api, "/api/schedule-dag", {"dag_id": "mar_dag"}) for _ in range(6)]
    held = api.get(f"/api/runs/{run_ids[-1]}", {"include_tasks": "true"}).json()
    assert held["status"] == "pending" and held["tasks"][0]["status"] == "pending", held
    for run_id in run_ids:
        assert wait_run(api, run_id)["status"] == "completed"
    intervals = [(tr.start_time, tr.end_time) for tr in TaskRun.objects.filter(run_id__in=run_ids)]
    assert peak(intervals) == 2, intervals
    assert not Run.objects.filter(run_id__in=run_ids, waiting=True).exists()


def test_pool_slots_are_never_exceeded_by_four_agents(four_agents, api, tmp_path):
    assert api.put("/api/pools/lim_pool", {"slots": 2}, format="json").status_code == 201
    # The pooled commands wait for a gate file, so the pool stays full until the test opens it: the
    # free task below can only complete if it does not queue behind the pool (no timing involved).
    gate = tmp_path / "gate"
    command = f"until [ -e {gate} ]; do sleep 0.05; done; sleep 0.2"
    put_task(api, "pool_task", command, queue=four_agents, pool="lim_pool")
    put_task(api, "free_task", "echo free", queue=four_agents)
    pooled = [schedule(api, "/api/schedule-task", {"task_id": "pool_task"}) for _ in range(8)]
    free = schedule(api, "/api/schedule-task", {"task_id": "free_task"})
    state = api.get("/api/pools").json()["pools"][0]
    assert state["name"] == "lim_pool" and state["used"] <= 2 and state["used"] + state["queued"] <= 8
    # a task outside the pool is not held up behind the pool's queue
    assert wait_run(api, free)["status"] == "completed"
    assert not TaskRun.objects.filter(run_id__in=pooled, status="completed").exists()
    gate.touch()
    for run_id in pooled:
        assert wait_run(api, run_id)["status"] == "completed"
    intervals = [(tr.start_time, tr.end_time) for tr in TaskRun.objects.filter(run_id__in=pooled)]
    assert peak(intervals) == 2, intervals
    assert api.get("/api/pools").json()["pools"][0] == {
        "name": "lim_pool",
        "slots": 2,
        "used": 0,
        "queued": 0,
    }


def test_a_killed_agent_releases_its_pool_slot(two_agents, api, settings, tmp_path):
    queue, procs = two_agents
    settings.AGENT_STALE_SECONDS = 3
    api.put("/api/pools/kill_pool", {"slots": 1}, format="json")
    put_task(
        api,
        "kp_hold",
        f"while [ ! -e {tmp_path / 'never'} ]; do sleep 0.05; done",
        queue=queue,
        pool="kill_pool",
    )
    put_task(api, "kp_next", "echo next", queue=queue, pool="kill_pool")
    held = schedule(api, "/api/schedule-task", {"task_id": "kp_hold"})
    holder = wait_for(lambda: TaskRun.objects.filter(run_id=held, status="running").values_list("agent_id", flat=True).first(),
                      what="the holder to start")  # fmt: skip
    waiting = schedule(api, "/api/schedule-task", {"task_id": "kp_next"})
    assert api.get("/api/pools").json()["pools"] == [
        {"name": "kill_pool", "slots": 1, "used": 1, "queued": 1}
    ]

    victim = next(p for p in procs if holder.startswith(p.name + "@"))
    victim.kill()
    victim.proc.wait(timeout=10)
    # the sweeper (called here as the beat task would) fails the orphan, which frees the slot
    wait_for(lambda: agents_sweep() and TaskRun.objects.get(run_id=held).status == "failed",
             timeout=20, interval=0.5, what="the orphan to be recovered")  # fmt: skip
    run = wait_run(api, waiting, timeout=30)
    assert run["status"] == "completed", run
    hold_end = TaskRun.objects.get(run_id=held).end_time
    assert TaskRun.objects.get(run_id=waiting).start_time >= hold_end
    assert api.get("/api/pools").json()["pools"][0]["used"] == 0


@pytest.fixture
def two_queue_agent(subprocess_env, django_db_blocker):
    token = uuid.uuid4().hex[:6]
    queues = (f"fair_a-{token}", f"fair_b-{token}")
    proc = start_agent(f"fair-{token}", ",".join(queues), subprocess_env, concurrency=1)
    try:
        wait_agent_ready(proc)
        yield queues
    finally:
        stop_agents([proc], django_db_blocker)


def test_a_flood_in_one_queue_does_not_starve_another(two_queue_agent, api):
    """One agent process serving two queues takes their messages in turn, and a message only claims
    work of its own queue: the flood delays the other queue by what the agent already holds."""
    flood_queue, other_queue = two_queue_agent
    put_task(api, "fair_flood", "sleep 0.1", queue=flood_queue)
    put_task(api, "fair_other", "echo other", queue=other_queue)
    flood = [schedule(api, "/api/schedule-task", {"task_id": "fair_flood"}) for _ in range(20)]
    wait_for(
        lambda: TaskRun.objects.filter(run_id__in=flood, status="completed").exists(),
        what="the flood to start",
    )
    other = schedule(api, "/api/schedule-task", {"task_id": "fair_other"})
    scheduled_at = Run.objects.get(pk=other).start_time
    assert wait_run(api, other)["status"] == "completed"
    other_start = TaskRun.objects.get(run_id=other).start_time
    overtaking = TaskRun.objects.filter(
        run_id__in=flood, start_time__gt=scheduled_at, start_time__lt=other_start
    )
    assert overtaking.count() <= 2, list(overtaking.values_list("start_time", flat=True))
    assert TaskRun.objects.filter(run_id__in=flood).exclude(status="completed").exists()  # still flooding
    for run_id in flood:
        wait_run(api, run_id)
