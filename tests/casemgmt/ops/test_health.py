import pytest
from django.test import override_settings


def assert_error_shape(response, status, code):
    assert response.status_code == status, response.content
    body = response.json()
    assert body["error"] is True and body["code"] == code
    assert isinstance(body["message"], str) and body["message"]
    assert isinstance(body["details"], dict)
    return body


def test_health_reports_database_uptime_and_version(db, client):
    response = client.get("/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["database"] == "ok"
    assert isinstance(body["uptime"], float) and body["uptime"] >= 0
    assert body["version"] == "0.1.0"


def test_healthz_and_readyz_are_plain_text(db, client):
    assert client.get("/healthz").content == b"ok\n"
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready["Content-Type"].startswith("text/plain")


def test_readyz_is_503_when_the_broker_is_unreachable(db, client):
    with override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0"):
        response = client.get("/readyz")
    assert response.status_code == 503
    assert b"broker" in response.content


def test_readyz_is_503_when_the_database_is_unreachable(db, client, settings):
    from django.db import connections

    original = dict(connections["default"].settings_dict)
    connections["default"].close()
    connections["default"].settings_dict["PORT"] = 1
    try:
        response = client.get("/readyz")
    finally:
        connections["default"].close()
        connections["default"].settings_dict.update(original)
    assert response.status_code == 503 and b"database" in response.content


def test_metrics_are_prometheus_text(db, client):
    client.get("/health")
    response = client.get("/metrics")
    assert response.status_code == 200
    assert b"django_http_requests_total_by_method_total" in response.content


def test_openapi_document_and_docs_page(db, client):
    response = client.get("/openapi.json")
    assert response.status_code == 200
    assert response.json()["openapi"].startswith("3.")
    assert "/auth/login" in response.json()["paths"]
    assert client.get("/docs").status_code == 200


def test_unknown_route_is_a_json_404(db, client):
    body = assert_error_shape(client.get("/no/such/route"), 404, "not_found")
    assert "/no/such/route" in body["message"]


def test_malformed_json_is_a_400(db, client):
    response = client.post("/auth/login", data="{not json", content_type="application/json")
    assert_error_shape(response, 400, "validation_error")


def test_wrong_method_is_a_json_405(db, client):
    assert_error_shape(client.get("/auth/login"), 405, "method_not_allowed")


@pytest.mark.parametrize("header", [None, "Bearer not-a-jwt", "Basic abc", "Bearer "])
def test_missing_or_bad_token_is_a_json_401(db, client, header):
    extra = {"HTTP_AUTHORIZATION": header} if header else {}
    assert_error_shape(client.post("/auth/logout", **extra), 401, "not_authenticated")


def test_request_id_is_echoed_or_generated(db, client):
    assert client.get("/healthz", HTTP_X_REQUEST_ID="abc-123")["X-Request-ID"] == "abc-123"
    assert len(client.get("/healthz")["X-Request-ID"]) == 32


def test_unhandled_error_is_a_500_without_traceback(db, client, caplog):
    from django.urls import path

    from casemgmt.config import urls

    def boom(request):
        raise RuntimeError("secret internals")

    urls.urlpatterns.append(path("__boom", boom))
    try:
        from django.urls import clear_url_caches

        clear_url_caches()
        response = client.get("/__boom", HTTP_X_REQUEST_ID="req-500")
    finally:
        urls.urlpatterns.pop()
        clear_url_caches()
    body = assert_error_shape(response, 500, "internal_error")
    assert "secret internals" not in response.content.decode()
    assert "Traceback" not in response.content.decode()
    assert any("req-500" in r.getMessage() for r in caplog.records)
    assert body["message"] == "Internal server error."


def test_oversized_body_is_a_413(db, client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    response = client.post(
        "/auth/login", data='{"email": "' + "a" * 500 + '"}', content_type="application/json"
    )
    assert_error_shape(response, 413, "payload_too_large")


@pytest.mark.parametrize(
    "body",
    [
        "[" * 5000 + "]" * 5000,  # deeper than the interpreter's recursion limit
        "[" * 70 + "]" * 70,  # deeper than MAX_DEPTH
        '{"email": "a\\u0000b", "password": "x"}',  # PostgreSQL text cannot hold NUL
    ],
)
def test_hostile_json_is_a_400_not_a_500(db, client, body):
    assert_error_shape(
        client.post("/auth/login", data=body, content_type="application/json"), 400, "validation_error"
    )


@pytest.mark.parametrize(
    "url", ["/cases?offset=99999999999999999999999", "/cases?search=a%00b", "/cases/a%00b"]
)
def test_hostile_urls_are_a_400_not_a_500(db, client, admin_user, url):
    from casemgmt.accounts.tokens import issue_for

    response = client.get(url, HTTP_AUTHORIZATION=f"Bearer {issue_for(admin_user).token}")
    assert_error_shape(response, 400, "validation_error")


def test_form_encoded_bodies_are_refused_where_json_is_expected(db, client):
    response = client.post("/auth/login", data={"email": "a@b.c", "password": "x"})  # multipart
    assert_error_shape(response, 415, "unsupported_media_type")
