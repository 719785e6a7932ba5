"""The scheduler as real processes: a `run_scheduler` killed with SIGKILL in the middle of a fire,
two `run_scheduler` loops ticking the same schedules, and an agent (whose scheduler thread ticks)
running what an interval schedule made through to `completed`."""

from __future__ import annotations

import signal
import sys
import uuid
from datetime import timedelta

import psycopg
import pytest
from django.db import connection

from orchestrator.runs.models import Run
from orchestrator.schedules.firing import schedules_tick
from orchestrator.schedules.models import Schedule, SchedulerTick
from orchestrator.schedules.services import ScheduleSpec, schedule_create, schedule_set_paused
from shared.api.time import now_ms
from tests.orchestrator.helpers import put_task, start_agent, stop_agents, wait_agent_ready, wait_run
from tests.support.processes import ServiceProcess, child_env, database_url, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


def run_scheduler(name: str, env: dict[str, str], *args: str) -> ServiceProcess:
    argv = [sys.executable, "manage_orch.py", "run_scheduler", "--name", name, *args]
    return ServiceProcess(name, argv, child_env(env))


def fire_times(schedule_id: str) -> list:
    return list(
        Run.objects.filter(schedule_id=schedule_id).order_by("fire_time").values_list("fire_time", flat=True)
    )


def test_a_scheduler_killed_mid_fire_leaves_no_partial_fire(api, subprocess_env):
    put_task(api, "killed_task", "echo hi")
    schedule = schedule_create(
        schedule_id="killed", spec=ScheduleSpec(task_id="killed_task", interval_seconds=1)
    )
    due = schedule.next_fire_time
    wait_for(lambda: now_ms() > due, what="the first fire time to pass")
    # Another session holds the events table: the scheduler inserts the run and its task runs, then
    # waits on its first event insert, inside the fire's transaction. There it is killed.
    url = database_url(connection.settings_dict).replace("postgres://", "postgresql://")
    blocker = psycopg.connect(url)  # in a transaction from its first statement
    observer = psycopg.connect(url, autocommit=True)  # activity views are read afresh only outside one
    proc = None
    try:
        blocker.execute("LOCK TABLE orch_events_event IN SHARE MODE")
        proc = run_scheduler("sched-killed", subprocess_env, "--once")
        waiting = (
            "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            " AND query LIKE 'INSERT INTO \"orch_events_event\"%%'"
        )
        wait_for(
            lambda: observer.execute(waiting).fetchall() or not proc.alive(),
            timeout=60,
            what="the scheduler to block inside the fire",
        )
        assert proc.alive(), proc.log_text()
        backend = observer.execute(waiting).fetchone()[0]
        proc.kill(signal.SIGKILL)
        proc.proc.wait(timeout=10)
        # The lock released, the orphaned backend goes on until it next talks to its dead client;
        # without a COMMIT from that client, its transaction is rolled back.
        blocker.rollback()
        gone = "SELECT count(*) FROM pg_stat_activity WHERE pid = %s"
        wait_for(lambda: observer.execute(gone, [backend]).fetchone()[0] == 0, what="the backend to end")
    finally:
        blocker.close()
        observer.close()
        if proc is not None:
            proc.stop()
    assert fire_times("killed") == [] and Schedule.objects.get(pk="killed").next_fire_time == due
    assert schedules_tick(now=due + timedelta(milliseconds=500)) == 1  # the same fire time, once
    assert fire_times("killed") == [due]


def test_two_scheduler_processes_fire_each_time_once(api, subprocess_env):
    put_task(api, "twice_task", "echo hi")
    token = uuid.uuid4().hex[:6]
    names = {f"sched1-{token}", f"sched2-{token}"}
    procs = [run_scheduler(name, subprocess_env, "--period", "0.05") for name in sorted(names)]
    try:

        def ticking() -> bool:
            return names <= set(SchedulerTick.objects.values_list("name", flat=True))

        wait_for(lambda: ticking() or not all(p.alive() for p in procs), timeout=60, what="both ticking")
        assert all(p.alive() for p in procs), [p.log_text() for p in procs]
        spec = ScheduleSpec(task_id="twice_task", interval_seconds=1, catchup="all", max_catchup=100)
        schedule = schedule_create(schedule_id="twice", spec=spec)
        wait_for(lambda: len(fire_times("twice")) >= 6, timeout=60, what="six fire times")
        schedule_set_paused(schedule_id="twice", paused=True)
        assert all(p.alive() for p in procs), [p.log_text() for p in procs]
    finally:
        for proc in procs:
            proc.stop()
    # Every second from the first fire time on, each once: none lost, none twice.
    times = fire_times("twice")
    assert times[0] == schedule.next_fire_time
    assert [(b - a).total_seconds() for a, b in zip(times, times[1:], strict=False)] == [1.0] * (
        len(times) - 1
    )


def test_an_interval_schedule_run_by_an_agent_completes(api, subprocess_env, django_db_blocker):
    put_task(api, "e2e_task", "echo scheduled $WHO")
    token = uuid.uuid4().hex[:6]
    # No --no-control: this agent consumes the control queue, so its scheduler thread ticks.
    agent = start_agent(
        f"sched-agent-{token}",
        "default",
        {**subprocess_env, "ORCH_SCHEDULER_TICK_SECONDS": "0.2"},
        extra_args=(),
    )
    try:
        wait_agent_ready(agent)
        schedule_create(
            schedule_id="e2e",
            spec=ScheduleSpec(task_id="e2e_task", interval_seconds=2, parameters={"WHO": "agent"}),
        )
        first = wait_for(
            lambda: Run.objects.filter(schedule_id="e2e").first(), timeout=30, what="a scheduled run"
        )
        run = wait_run(api, first.run_id, timeout=60)
        assert run["status"] == "completed" and run["schedule_id"] == "e2e" and run["fire_time"]
        logs = api.get(f"/api/tasks/{run['tasks'][0]['task_run_id']}/logs").json()["logs"]
        assert "scheduled agent" in logs
        status = api.get("/api/status").json()["components"]["scheduler"]
        assert status["status"] == "healthy" and status["count"] >= 1 and status["schedules"]["active"] == 1
        schedule_set_paused(schedule_id="e2e", paused=True)
    finally:
        stop_agents([agent], django_db_blocker)
