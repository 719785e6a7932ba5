"""While Redis is down, scheduling under daphne answers 201 (the run is in the database; its
wake-ups are left to the sweeper), never a 500 that would make a retrying client schedule twice;
with an Idempotency-Key, the retry answers the same run."""

from __future__ import annotations

import httpx
import pytest

from orchestrator.runs.models import Run
from tests.orchestrator.helpers import put_task
from tests.orchestrator.security.helpers import bearer
from tests.support.processes import start_ready_asgi_server
from tests.support.redis_server import running_private_redis

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def redis_server():
    with running_private_redis() as server:
        yield server


@pytest.fixture
def service(subprocess_env, redis_server):
    env = {**subprocess_env, "ORCH_REDIS_URL": redis_server.url, "ORCH_SECURITY_ENABLED": "true"}
    server, base = start_ready_asgi_server(
        name="orch-asgi-outage",
        application="orchestrator.config.asgi:application",
        env=env,
        health_path="/api/health",
        ready_statuses=(200, 503),
    )
    try:
        yield base
    finally:
        server.stop()


def test_schedule_task_while_redis_is_down(service, redis_server, api):
    put_task(api, "outage-task")
    headers = {"Authorization": bearer("operator")["HTTP_AUTHORIZATION"], "Idempotency-Key": "outage-1"}
    redis_server.stop()
    with httpx.Client(base_url=service, timeout=30) as http:
        answers = [
            http.post("/api/schedule-task", json={"task_id": "outage-task"}, headers=headers)
            for _ in range(2)
        ]
        listed = http.get("/api/runs", headers={"Authorization": headers["Authorization"]})
    assert [r.status_code for r in answers] == [201, 201], [r.text for r in answers]
    assert answers[0].json() == answers[1].json()
    assert listed.status_code == 200, listed.text
    assert list(Run.objects.values_list("run_id", flat=True)) == [answers[0].json()["run_id"]]
