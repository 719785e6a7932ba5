"""/api/health and /api/status say so when the broker (Redis) cannot be reached, quickly: a broker
that refuses connections, and one that accepts them and never answers."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from tests.support.redis_server import PrivateRedis

pytestmark = pytest.mark.django_db


@pytest.fixture
def stopped_broker(settings) -> Iterator[None]:
    server = PrivateRedis()
    server.start()
    settings.CELERY_BROKER_URL = f"{server.url}/3"
    server.stop()
    yield


@pytest.fixture
def silent_broker(settings) -> Iterator[None]:
    """A port that takes connections (the kernel's backlog) and never answers a command."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{sock.getsockname()[1]}/3"
        yield


def timed_get(api, path: str):
    started = time.monotonic()
    response = api.get(path)
    return response, time.monotonic() - started


@pytest.mark.parametrize("broker", ["stopped_broker", "silent_broker"])
def test_health_is_unhealthy_and_503_while_the_broker_is_unreachable(api, broker, request):
    request.getfixturevalue(broker)
    response, took = timed_get(api, "/api/health")
    assert response.status_code == 503 and took < 2.5, (response.status_code, took)
    body = response.json()
    assert body["status"] == "unhealthy"
    assert set(body["components"]) == {"backend", "orchestrator", "agents"}
    assert body["components"]["backend"] == "healthy" and body["components"]["orchestrator"] == "unhealthy"


@pytest.mark.parametrize("broker", ["stopped_broker", "silent_broker"])
def test_status_is_unhealthy_while_the_broker_is_unreachable(api, broker, request):
    request.getfixturevalue(broker)
    response, took = timed_get(api, "/api/status")
    assert response.status_code == 200 and took < 2.5, (response.status_code, took)
    body = response.json()
    assert body["status"] == "unhealthy" and body["backend"]["status"] == "healthy"
    assert body["components"]["orchestrator"] == {
        "status": "unhealthy",
        "count": 1,
        "reason": "the broker (Redis) is unreachable",
    }


def test_health_is_back_to_the_agents_view_once_the_broker_answers(api):
    body = api.get("/api/health").json()  # the shared test Redis
    assert body["components"]["orchestrator"] == "healthy"
    assert api.get("/api/status").json()["components"]["orchestrator"] == {"status": "healthy", "count": 1}
