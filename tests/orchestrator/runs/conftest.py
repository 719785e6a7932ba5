from __future__ import annotations

import uuid

import pytest

from tests.orchestrator.helpers import start_agent, stop_agents, wait_agent_ready


@pytest.fixture(scope="module")
def agents(subprocess_env, django_db_blocker):
    """Two agents on the `default` and `other` queues, shared by the execution tests."""
    token = uuid.uuid4().hex[:6]
    procs = [start_agent(f"agent{i}-{token}", "default,other", subprocess_env) for i in (1, 2)]
    try:
        for proc in procs:
            wait_agent_ready(proc)
        yield procs
    finally:
        stop_agents(procs, django_db_blocker)
