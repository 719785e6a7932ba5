"""Retiring agents: a cleanly stopped agent shows as stopped, then is retired after
AGENT_RETIRE_SECONDS (status healthy again once the live agents are), and an operator can retire an
offline one at once (POST /api/agents/{id}/retire, audited)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from orchestrator.agents.models import Agent
from orchestrator.agents.services import agent_heartbeat, agent_stopped, agents_sweep
from orchestrator.audit.models import AuditEvent
from orchestrator.system.services import sweep_state_record
from shared.api.time import now_ms
from tests.orchestrator.security.helpers import api_key_headers

pytestmark = pytest.mark.django_db
RETIRE = 5


@pytest.fixture(autouse=True)
def only_our_agents(settings):
    """Agent processes of other test files heartbeat into this database; these tests count agents
    exactly, so they start from none (the delete is rolled back after)."""
    settings.AGENT_STALE_SECONDS = 2
    settings.AGENT_RETIRE_SECONDS = RETIRE
    Agent.objects.all().delete()


def silent_for(agent_id: str, seconds: float) -> None:
    Agent.objects.filter(pk=agent_id).update(last_heartbeat=now_ms() - timedelta(seconds=seconds))


def agent_states(api) -> dict[str, str]:
    return {a["agent_id"]: a["status"] for a in api.get("/api/agents").json()["agents"]}


def test_a_cleanly_stopped_agent_is_retired_and_status_is_healthy_again(api):
    sweep_state_record(at=now_ms(), by="live@host")  # the recovery sweep runs
    agent_heartbeat(agent_id="live@host", queues=["default"], tags=[], session_id="l1")
    agent_heartbeat(agent_id="calm@host", queues=["default"], tags=[], session_id="c1")
    assert agent_stopped(agent_id="calm@host", session_id="c1")  # what a graceful shutdown calls
    assert Agent.objects.get(pk="calm@host").stopped_at is not None
    status = api.get("/api/status").json()
    assert status["components"]["agents"] == {"status": "degraded", "count": 2, "active": 1, "inactive": 1}
    assert agent_states(api) == {"live@host": "active", "calm@host": "offline"}

    silent_for("calm@host", RETIRE + 1)  # the retire period passed; the live one kept beating
    status = api.get("/api/status").json()
    assert status["status"] == "healthy", status
    assert status["components"]["agents"] == {"status": "healthy", "count": 1, "active": 1, "inactive": 0}
    assert api.get("/api/health").json()["status"] == "healthy"
    assert agent_states(api) == {"live@host": "active"}
    agents_sweep()  # the sweep forgets the row
    assert list(Agent.objects.values_list("pk", flat=True)) == ["live@host"]


def test_a_dead_agent_is_retired_too_and_one_that_comes_back_is_listed_again(api):
    agent_heartbeat(agent_id="gone@host", queues=["default"], tags=[])
    silent_for("gone@host", RETIRE + 1)
    assert agent_states(api) == {}
    agent_heartbeat(agent_id="gone@host", queues=["default"], tags=[])
    assert agent_states(api) == {"gone@host": "active"}


def test_a_heartbeat_after_a_stop_clears_the_stop(api):
    agent_heartbeat(agent_id="back@host", queues=["default"], tags=[])
    agent_stopped(agent_id="back@host")
    agent_heartbeat(agent_id="back@host", queues=["default"], tags=[])
    agent = Agent.objects.get(pk="back@host")
    assert (agent.status, agent.stopped_at) == ("active", None)


@pytest.fixture
def secured(settings):
    settings.ORCH_SECURITY_ENABLED = True


def test_an_operator_retires_an_offline_agent_by_hand(api, secured):
    agent_heartbeat(agent_id="calm@host", queues=["default"], tags=[])
    agent_stopped(agent_id="calm@host")
    response = api.post("/api/agents/calm@host/retire", **api_key_headers("operator", "ops-key"))
    assert response.status_code == 200, response.content
    assert response.json() == {"success": True, "message": "Agent calm@host retired."}
    assert not Agent.objects.filter(pk="calm@host").exists()
    event = AuditEvent.objects.get(action="agent.retired")
    assert (event.actor, event.resource) == ("ops-key", "agents/calm@host")


def test_a_live_agent_is_not_retired(api, secured):
    agent_heartbeat(agent_id="busy@host", queues=["default"], tags=[])
    response = api.post("/api/agents/busy@host/retire", **api_key_headers("operator"))
    assert response.status_code == 409 and response.json()["code"] == "invalid_state"
    assert Agent.objects.filter(pk="busy@host").exists()
    assert not AuditEvent.objects.filter(action="agent.retired").exists()


def test_an_unknown_or_already_retired_agent_is_not_found(api, secured):
    agent_heartbeat(agent_id="old@host", queues=["default"], tags=[])
    silent_for("old@host", RETIRE + 1)
    operator = api_key_headers("operator")
    for agent_id in ("never@host", "old@host"):
        response = api.post(f"/api/agents/{agent_id}/retire", **operator)
        assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_viewers_and_anonymous_callers_cannot_retire(api, secured):
    agent_heartbeat(agent_id="calm@host", queues=["default"], tags=[])
    agent_stopped(agent_id="calm@host")
    assert api.post("/api/agents/calm@host/retire").status_code == 401
    response = api.post("/api/agents/calm@host/retire", **api_key_headers("viewer"))
    assert response.status_code == 403 and response.json()["code"] == "permission_denied"
    assert Agent.objects.filter(pk="calm@host").exists()
