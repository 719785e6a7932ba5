"""GET /api/status and /api/metrics from real state (database rows, heartbeats, psutil), and the
run/task figures on Prometheus /metrics."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from orchestrator.agents.models import Agent
from orchestrator.system.services import sweep_state_record
from shared.api.time import now_ms
from tests.orchestrator.security.helpers import api_key_headers

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def only_our_agents():
    """Agent processes other test files keep alive (session fixtures) heartbeat into this database;
    these tests count agents exactly, so they start from none (the delete is rolled back after)."""
    Agent.objects.all().delete()


def heartbeat(agent_id: str, *, age_seconds: float, queues=("default",), status="active") -> None:
    now = timezone.now()
    Agent.objects.create(
        agent_id=agent_id,
        queues=list(queues),
        tags=[],
        status=status,
        started_at=now - timedelta(seconds=600),
        last_heartbeat=now - timedelta(seconds=age_seconds),
    )


def test_status_fields_and_types(api):
    sweep_state_record(at=now_ms(), by="a1@host")
    heartbeat("a1@host", age_seconds=1, queues=["default", "gpu"])
    heartbeat("a2@host", age_seconds=120)
    body = api.get("/api/status").json()
    assert set(body) == {"status", "version", "uptime_seconds", "backend", "components", "queues"}
    assert body["status"] == "degraded" and body["version"] == "0.1.0"
    assert isinstance(body["uptime_seconds"], int) and body["uptime_seconds"] >= 0
    assert body["backend"]["type"] == "postgresql" and body["backend"]["status"] == "healthy"
    assert isinstance(body["backend"]["latency_ms"], float) and body["backend"]["latency_ms"] > 0
    recovery = body["components"].pop("recovery")
    assert body["components"] == {
        "orchestrator": {"status": "healthy", "count": 1},
        "agents": {"status": "degraded", "count": 2, "active": 1, "inactive": 1},
        "ui": {"status": "healthy"},
        "scheduler": {
            "status": "idle",  # no schedule to fire and no scheduler ticking
            "last_tick_at": None,
            "tick_seconds": 5.0,
            "count": 0,
            "schedules": {"total": 0, "active": 0, "paused": 0},
        },
    }
    assert set(recovery) == {"status", "reason", "last_sweep_at", "last_sweep_by", "period_seconds"}
    assert recovery["status"] == "healthy" and recovery["last_sweep_by"] == "a1@host"
    assert body["queues"] == {
        "total_pending_tasks": 0,
        "queues": [{"name": "default", "length": 0}, {"name": "gpu", "length": 0}],
    }


def test_last_sweep_at_is_a_millisecond_timestamp_like_the_others(api):
    at = timezone.now().replace(microsecond=123456)  # a sweep records the time with microseconds
    sweep_state_record(at=at, by="a1@host")
    recovery = api.get("/api/status").json()["components"]["recovery"]
    assert recovery["last_sweep_at"] == at.strftime("%Y-%m-%dT%H:%M:%S.123Z")


def test_status_with_only_healthy_agents_is_healthy(api):
    sweep_state_record(at=now_ms(), by="a1@host")  # and recovery running
    heartbeat("a1@host", age_seconds=0)
    body = api.get("/api/status").json()
    assert body["status"] == "healthy"
    assert body["components"]["agents"] == {"status": "healthy", "count": 1, "active": 1, "inactive": 0}
    assert api.get("/api/health").json() == {
        "status": "healthy",
        "components": {"backend": "healthy", "orchestrator": "healthy", "agents": "healthy"},
    }


def test_agent_marked_offline_is_inactive_even_with_a_recent_heartbeat(api):
    heartbeat("a1@host", age_seconds=0, status="offline")
    agents = api.get("/api/status").json()["components"]["agents"]
    assert agents == {"status": "unhealthy", "count": 1, "active": 0, "inactive": 1}


def test_metrics_fields_and_types_on_an_empty_system(api):
    body = api.get("/api/metrics").json()
    assert set(body) == {"tasks", "runs", "performance", "resources"}
    for key in ("pending", "running", "completed", "failed", "total"):
        assert body["tasks"][key] == 0 and body["runs"][key] == 0
    perf = body["performance"]
    assert perf["average_task_duration_seconds"] == 0.0 and perf["average_dag_duration_seconds"] == 0.0
    assert perf["tasks_per_minute"] == 0.0 and perf["window_seconds"] == 300
    res = body["resources"]
    assert isinstance(res["cpu_usage_percent"], float) and 0 <= res["cpu_usage_percent"] <= 100
    assert isinstance(res["memory_usage_mb"], float) and res["memory_usage_mb"] > 0
    assert isinstance(res["disk_usage_percent"], float) and 0 < res["disk_usage_percent"] <= 100


def test_prometheus_exports_orchestrator_figures(api):
    heartbeat("a1@host", age_seconds=0, queues=["default"])
    text = api.get("/metrics").content.decode()
    assert 'orchestrator_task_runs{status="completed"} 0.0' in text
    assert 'orchestrator_runs{status="pending"} 0.0' in text
    assert 'orchestrator_task_runs_finished_total{status="failed"} 0.0' in text
    assert 'orchestrator_task_run_duration_seconds_bucket{le="+Inf"} 0.0' in text
    assert "orchestrator_run_duration_seconds_count 0.0" in text
    assert 'orchestrator_agents{state="active"} 1.0' in text
    assert 'orchestrator_queue_length{queue="default"} 0.0' in text
    assert 'orchestrator_webhook_deliveries{status="failed"} 0.0' in text


@pytest.mark.parametrize("path", ["/api/status", "/api/metrics"])
def test_status_and_metrics_roles(api, settings, path):
    settings.ORCH_SECURITY_ENABLED = True
    assert api.get(path).status_code == 401
    assert api.get(path, **api_key_headers("viewer")).status_code == 200
    assert api.post(path, {}, format="json", **api_key_headers("admin", name="adm")).status_code == 405


def test_status_ui_is_measured_from_the_docs_routes(api, settings):
    assert api.get("/api/status").json()["components"]["ui"] == {"status": "healthy"}
    assert api.get("/docs").status_code == 200  # what "healthy" stands for
    settings.ROOT_URLCONF = "tests.orchestrator.system.urls_without_docs"
    assert api.get("/docs").status_code == 404
    assert api.get("/api/status").json()["components"]["ui"] == {"status": "unhealthy"}
