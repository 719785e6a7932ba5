"""A busy agent rides out a broker (Redis) outage: it stays alive, reconnects when Redis is back,
and the DAG it was working on completes. Should its worker still stop on an error of its own, the
agent starts itself again."""

from __future__ import annotations

import uuid

import pytest
import redis

from orchestrator.agents.models import AgentSession
from orchestrator.agents.services import agents_sweep
from orchestrator.config.celery import app
from orchestrator.runs.models import TaskRun
from shared.conf import isolation_prefix
from tests.orchestrator.helpers import put_dag, put_task, start_agent, stop_agents, wait_agent_ready, wait_run
from tests.support.processes import wait_for
from tests.support.redis_server import PrivateRedis

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def private_broker():
    """This test process publishes its wake-ups to the private Redis as well. Celery keeps its
    connection and producer pools per broker address, so pointing the app at another address and
    forgetting the pools it cached is enough; the usual broker's pools stay untouched."""
    server = PrivateRedis()
    server.start()
    original = app.conf.broker_url
    app.conf.broker_url = f"{server.url}/3"
    app._pool, app.amqp._producer_pool = None, None
    try:
        yield server
    finally:
        app.pool.force_close_all()
        app.conf.broker_url = original
        app._pool, app.amqp._producer_pool = None, None
        server.stop()


def test_a_busy_agent_survives_a_broker_outage_and_its_dag_completes(
    private_broker, subprocess_env, django_db_blocker, api, settings
):
    settings.AGENT_STALE_SECONDS = 3
    token = uuid.uuid4().hex[:6]
    queue = f"outage-{token}"
    env = {**subprocess_env, "ORCH_REDIS_URL": private_broker.url}
    # Consuming the control queue too, as a default agent does.
    agent = start_agent(f"outage-{token}", queue, env, concurrency=2, extra_args=())
    try:
        wait_agent_ready(agent)
        # a and b run when the broker goes away and finish during the outage; c and d follow.
        for name in ("a", "b", "c", "d"):
            put_task(api, f"{name}-{token}", "sleep 2; echo ok" if name in "ab" else "echo ok", queue=queue)
        tasks = [
            {"id": f"a-{token}"},
            {"id": f"b-{token}"},
            {"id": f"c-{token}", "dependencies": [f"a-{token}", f"b-{token}"]},
            {"id": f"d-{token}", "dependencies": [f"c-{token}"]},
        ]
        put_dag(api, f"dag-{token}", tasks)
        response = api.post("/api/schedule-dag", {"dag_id": f"dag-{token}"}, format="json")
        assert response.status_code == 201, response.content
        run_id = response.json()["run_id"]
        runs = TaskRun.objects.filter(run_id=run_id)
        wait_for(lambda: runs.filter(status="running").count() == 2, timeout=30, what="a and b to run")

        private_broker.stop()
        # The outage lasts until a and b finished without a broker (c's wake-up could not be sent)
        # and the agent failed to reconnect three times (about 6 s of retries).
        wait_for(
            lambda: runs.filter(status="completed").count() == 2 and "(3/" in agent.log_text(),
            timeout=30,
            what="the outage to be well under way",
        )
        assert agent.alive(), agent.log_text()
        assert runs.get(task_id=f"c-{token}").status == "queued"
        private_broker.start()

        # The sweeper (called here as the beat task would be) re-sends the wake-up the outage lost.
        def finished():
            agents_sweep()
            return not runs.exclude(status="completed").exists()

        wait_for(finished, timeout=60, interval=0.5, what="the DAG to complete after the outage")
        assert wait_run(api, run_id)["status"] == "completed"
        log = agent.log_text()
        assert agent.alive() and "Unrecoverable error" not in log, log
        assert "starting the agent again" not in log  # it rode the outage out, no restart needed
    finally:
        stop_agents([agent], django_db_blocker)


def test_an_agent_whose_worker_stops_on_an_error_starts_itself_again(
    private_broker, subprocess_env, django_db_blocker, api
):
    token = uuid.uuid4().hex[:6]
    name, queue = f"restart-{token}", f"restart-{token}"
    env = {
        **subprocess_env,
        "ORCH_REDIS_URL": private_broker.url,
        "ORCH_AGENT_RESTART_MIN_UPTIME_SECONDS": "0.5",
    }
    agent = start_agent(name, queue, env, concurrency=1)
    try:
        wait_agent_ready(agent)
        sessions = AgentSession.objects.filter(agent__agent_id__startswith=f"{name}@")
        wait_for(lambda: sessions.count() == 1, what="the first session")
        # The queue's key holding a string makes the worker's BRPOP fail with an error Celery does
        # not recover from: the worker stops.
        broker = redis.Redis(port=private_broker.port, db=3)
        broker.set(f"{isolation_prefix()}{queue}", "not a list")
        wait_for(lambda: sessions.count() >= 2, timeout=60, what="the agent to start again as a new session")
        broker.delete(f"{isolation_prefix()}{queue}")

        put_task(api, f"after-{token}", "echo alive", queue=queue)
        response = api.post("/api/schedule-task", {"task_id": f"after-{token}"}, format="json")
        run_id = response.json()["run_id"]

        def done():
            agents_sweep()  # re-sends a wake-up lost while the queue's key was broken
            return TaskRun.objects.filter(run_id=run_id, status="completed").exists()

        wait_for(done, timeout=60, interval=0.5, what="the restarted agent to run a task")
        log = agent.log_text()
        assert agent.alive(), log
        assert "Unrecoverable error" in log and "starting the agent again" in log
    finally:
        stop_agents([agent], django_db_blocker)
