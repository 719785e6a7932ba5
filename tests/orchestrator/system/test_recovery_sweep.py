"""The recovery sweep's lock and record, at the service level: two processes never sweep at once,
and /api/status is degraded when no sweep finished within its period."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection

from orchestrator.agents.models import Agent
from orchestrator.system.models import SweepState
from orchestrator.system.services import recovery_lock, recovery_sweep, sweep_state_record
from shared.api.time import now_ms


@pytest.fixture
def lock_held_elsewhere():
    """Another connection (a thread, as another agent would be a process) holds the sweep lock
    until the test lets it go."""
    acquired, release = threading.Event(), threading.Event()
    outcome = {}

    def holder():
        try:
            with recovery_lock() as held:
                outcome["held"] = held
                acquired.set()
                release.wait(30)
        finally:
            connection.close()

    thread = threading.Thread(target=holder)
    thread.start()
    assert acquired.wait(10) and outcome["held"]

    def let_go() -> None:
        release.set()
        thread.join(10)

    yield let_go
    let_go()


@pytest.mark.django_db(transaction=True)
def test_a_sweep_is_skipped_while_another_connection_holds_the_lock(lock_held_elsewhere):
    assert recovery_sweep(sweeper="second", force=True) is None
    assert not SweepState.objects.filter(last_run_by="second").exists()

    lock_held_elsewhere()  # the first sweeper finishes; the lock is free again
    result = recovery_sweep(sweeper="second", force=True)
    assert result is not None and "task_runs_recovered" in result
    assert SweepState.objects.get(name="recovery").last_run_by == "second"


@pytest.mark.django_db(transaction=True)
def test_two_threads_sweeping_at_once_never_overlap():
    """Both try at the same moment, again and again: inside the lock, no other holder is seen."""
    inside, overlaps, runs = [0], [], []
    guard = threading.Lock()
    start = threading.Barrier(2)

    def sweeper(name: str) -> None:
        try:
            for _ in range(15):
                start.wait(10)
                with recovery_lock() as held:
                    if not held:
                        continue
                    with guard:
                        inside[0] += 1
                        overlaps.append(inside[0] > 1)
                    runs.append(recovery_sweep(sweeper=name, force=True))  # re-entrant on this connection
                    with guard:
                        inside[0] -= 1
        finally:
            connection.close()

    threads = [threading.Thread(target=sweeper, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert runs and all(r is not None for r in runs) and not any(overlaps)


@pytest.mark.django_db(transaction=True)
def test_agents_sweep_once_per_interval_unless_forced(settings):
    settings.SWEEP_INTERVAL_SECONDS = 60
    assert recovery_sweep(sweeper="a1") is not None
    assert recovery_sweep(sweeper="a2") is None  # a sweep ran less than an interval ago
    assert recovery_sweep(sweeper="a2", force=True) is not None


@pytest.mark.django_db
class TestStatus:
    @pytest.fixture(autouse=True)
    def one_live_agent(self):
        Agent.objects.all().delete()
        now = now_ms()
        Agent.objects.create(
            agent_id="a@h", queues=["default"], status="active", started_at=now, last_heartbeat=now
        )

    def test_degraded_when_the_last_sweep_is_older_than_its_period(self, api, settings):
        settings.SWEEP_OVERDUE_SECONDS = 15
        sweep_state_record(at=now_ms() - timedelta(seconds=16), by="a@h")
        body = api.get("/api/status").json()
        assert body["status"] == "degraded"
        recovery = body["components"]["recovery"]
        assert recovery["status"] == "degraded" and "has not run for over 15 s" in recovery["reason"]
        assert recovery["last_sweep_by"] == "a@h" and recovery["period_seconds"] == 15

        sweep_state_record(at=now_ms() - timedelta(seconds=5), by="a@h")
        body = api.get("/api/status").json()
        assert body["status"] == "healthy"
        assert body["components"]["recovery"]["status"] == "healthy"
        assert body["components"]["recovery"]["reason"] == ""

    def test_degraded_when_no_sweep_ever_ran(self, api):
        SweepState.objects.all().delete()
        body = api.get("/api/status").json()
        assert body["status"] == "degraded"
        assert body["components"]["recovery"]["status"] == "degraded"
        assert "never run" in body["components"]["recovery"]["reason"]
