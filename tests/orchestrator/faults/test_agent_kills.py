"""kill -9 of agents at random moments while they drain 100 task runs with retries (the bounded
version of `bench/faults/agent_kills.py`, which runs 1,000): nothing lost, nothing stuck, no attempt
executed twice."""

from __future__ import annotations

import pytest

from bench.faults import agent_kills

pytestmark = [pytest.mark.worker]


def test_agents_killed_at_random_lose_and_double_nothing():
    figures = agent_kills.run(
        task_runs_total=100, agents=2, retries=10, kill_every=(0.8, 2.0), timeout=300
    ).values
    assert figures["kills"] >= 2, figures  # the faults happened
    assert figures["task runs"] == 100, figures
    assert (figures["lost"], figures["stuck"], figures["run twice"]) == (0, 0, 0), figures
    assert figures["failed (retries used up)"] == 0, figures
    assert figures["API 5xx"] == 0, figures
