import uuid

import pytest
from django.core.cache import cache

from orchestrator.system.tasks import ping
from tests.support.processes import wait_for


def assert_error_shape(response, status, code):
    assert response.status_code == status, response.content
    body = response.json()
    assert body["error"] is True and body["code"] == code and body["message"]
    assert isinstance(body["details"], dict)
    return body


def test_health_is_open_and_reports_components(db, api, settings):
    settings.ORCH_SECURITY_ENABLED = True
    response = api.get("/api/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "degraded"  # the API works but no agent would run a task
    assert body["components"] == {"backend": "healthy", "orchestrator": "healthy", "agents": "unhealthy"}


def test_status_reports_backend_latency(db, api):
    body = api.get("/api/status").json()
    assert body["version"] == "0.1.0"
    assert body["backend"]["status"] == "healthy"
    assert isinstance(body["backend"]["latency_ms"], float)
    assert isinstance(body["uptime_seconds"], int)


def test_prometheus_metrics(db, api):
    api.get("/api/health")
    response = api.get("/metrics")
    assert response.status_code == 200 and b"django_http_requests_total_by_method_total" in response.content


def test_openapi_document(db, api):
    response = api.get("/openapi.json")
    assert response.status_code == 200
    doc = response.json()
    for path in ("/api/health", "/api/status", "/api/metrics", "/api/webhooks", "/api/webhooks/{webhook_id}"):
        assert path in doc["paths"], path
    assert set(doc["components"]["securitySchemes"]) == {"apiKeyAuth", "bearerAuth", "cookieAuth"}
    assert "secret" not in doc["components"]["schemas"]["WebhookList"]["properties"]
    assert set(doc["components"]["schemas"]["Metrics"]["properties"]) == {
        "tasks",
        "runs",
        "performance",
        "resources",
    }


def test_unknown_route_is_a_json_404(db, api):
    assert_error_shape(api.get("/api/nope"), 404, "not_found")


def test_malformed_json_is_a_400(db, api):
    # /api/status has no POST: 405 in the one error shape; malformed JSON needs a POST route, which
    # the definitions endpoints add. Here: the 405 mapping.
    assert_error_shape(
        api.post("/api/status", data="{bad", content_type="application/json"), 405, "method_not_allowed"
    )


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"HTTP_X_API_KEY": "ork_not-a-real-key-at-all-xxxxxxxx"},
        {"HTTP_AUTHORIZATION": "Bearer bad.jwt.value"},
    ],
)
def test_missing_or_bad_credentials_are_401_when_security_is_on(db, api, settings, headers):
    settings.ORCH_SECURITY_ENABLED = True
    assert_error_shape(api.get("/api/status", **headers), 401, "not_authenticated")


@pytest.mark.worker
def test_a_real_worker_runs_a_task_sent_through_redis(control_worker):
    token = uuid.uuid4().hex
    ping.delay(token)
    assert wait_for(lambda: cache.get(f"ping:{token}"), timeout=30, what="ping") == "pong"


@pytest.mark.parametrize("path", ["/metrics", "/openapi.json"])
def test_metrics_and_schema_need_credentials_when_security_is_on(db, api, settings, path):
    from tests.orchestrator.helpers import api_key

    settings.ORCH_SECURITY_ENABLED = True
    assert_error_shape(api.get(path), 401, "not_authenticated")
    assert api.get(path, HTTP_X_API_KEY=api_key("viewer")).status_code == 200


def test_form_encoded_bodies_are_refused(db, api):
    response = api.put("/api/tasks/t-form", "command=true", content_type="application/x-www-form-urlencoded")
    assert_error_shape(response, 415, "unsupported_media_type")


def test_over_long_values_are_a_400_not_a_500(db, api):
    response = api.put("/api/tasks/t-long", {"command": "true", "queue": "q" * 300}, format="json")
    assert_error_shape(response, 400, "validation_error")
