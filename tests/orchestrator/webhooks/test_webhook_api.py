"""POST/GET /api/webhooks, DELETE /api/webhooks/{id}: fields, validation, roles, SSRF refusal."""

from __future__ import annotations

import pytest

from orchestrator.webhooks.models import Webhook
from shared import crypto
from tests.orchestrator.security.helpers import api_key_headers

pytestmark = pytest.mark.django_db
SECRET = "whsec-super-secret-value-0123456789"
TOKEN = "Bearer header-token-that-must-stay-hidden"


@pytest.fixture
def roles(settings):
    settings.ORCH_SECURITY_ENABLED = True
    return {role: api_key_headers(role) for role in ("viewer", "operator", "admin")}


def body(**overrides):
    data = {
        "name": "ops hook",
        "url": "http://127.0.0.1:9/hook",
        "events": ["task.failed", "dag.completed"],
        "secret": SECRET,
        "headers": {"Authorization": TOKEN},
        "filters": {"dag_id": "etl"},
    }
    data.update(overrides)
    return data


def assert_error(response, status, code):
    assert response.status_code == status, response.content
    payload = response.json()
    assert payload["error"] is True and payload["code"] == code
    return payload


def test_create_returns_the_registration_without_secret_or_headers(api, roles):
    response = api.post("/api/webhooks", body(), format="json", **roles["admin"])
    assert response.status_code == 201, response.content
    data = response.json()
    assert set(data) == {"id", "name", "url", "events", "filters", "created_at"}
    assert data["id"].startswith("wh_") and data["name"] == "ops hook"
    assert data["url"] == "http://127.0.0.1:9/hook"
    assert data["events"] == ["dag.completed", "task.failed"]
    assert data["filters"] == {"dag_id": "etl"}
    assert data["created_at"].endswith("Z")
    assert SECRET.encode() not in response.content and TOKEN.encode() not in response.content


def test_secret_and_headers_are_encrypted_at_rest(api, roles):
    webhook_id = api.post("/api/webhooks", body(), format="json", **roles["admin"]).json()["id"]
    row = Webhook.objects.get(pk=webhook_id)
    assert SECRET not in row.secret_encrypted and TOKEN not in row.headers_encrypted
    assert crypto.decrypt_text(row.secret_encrypted) == SECRET
    assert crypto.decrypt_json(row.headers_encrypted) == {"Authorization": TOKEN}


def test_list_and_detail_never_show_secret_or_headers(api, roles):
    created = api.post("/api/webhooks", body(), format="json", **roles["admin"]).json()
    api.post("/api/webhooks", body(name="second", filters={}), format="json", **roles["admin"])
    listing = api.get("/api/webhooks", **roles["viewer"])
    assert listing.status_code == 200
    data = listing.json()
    assert data["total"] == 2 and data["limit"] == 50 and data["offset"] == 0
    assert [w["name"] for w in data["webhooks"]] == ["ops hook", "second"]
    assert set(data["webhooks"][0]) == {"id", "name", "url", "events", "filters", "created_at"}
    detail = api.get(f"/api/webhooks/{created['id']}", **roles["viewer"])
    assert detail.json() == created
    paged = api.get("/api/webhooks?limit=1&offset=1", **roles["viewer"]).json()
    assert [w["name"] for w in paged["webhooks"]] == ["second"]
    for response in (listing, detail):
        assert SECRET.encode() not in response.content and TOKEN.encode() not in response.content
    assert_error(api.get("/api/webhooks?limit=501", **roles["viewer"]), 400, "validation_error")


def test_delete(api, roles):
    webhook_id = api.post("/api/webhooks", body(), format="json", **roles["admin"]).json()["id"]
    assert_error(api.delete(f"/api/webhooks/{webhook_id}", **roles["operator"]), 403, "permission_denied")
    response = api.delete(f"/api/webhooks/{webhook_id}", **roles["admin"])
    assert response.status_code == 200
    assert response.json()["success"] is True and isinstance(response.json()["message"], str)
    assert not Webhook.objects.filter(pk=webhook_id).exists()
    assert_error(api.delete(f"/api/webhooks/{webhook_id}", **roles["admin"]), 404, "not_found")
    assert_error(api.get(f"/api/webhooks/{webhook_id}", **roles["admin"]), 404, "not_found")


def test_roles_and_anonymous(api, roles):
    assert_error(api.get("/api/webhooks"), 401, "not_authenticated")
    assert_error(api.post("/api/webhooks", body(), format="json"), 401, "not_authenticated")
    assert_error(
        api.post("/api/webhooks", body(), format="json", **roles["viewer"]), 403, "permission_denied"
    )
    assert_error(
        api.post("/api/webhooks", body(), format="json", **roles["operator"]), 403, "permission_denied"
    )
    assert api.get("/api/webhooks", **roles["viewer"]).status_code == 200


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"url": "ftp://example.com/x"}, "url"),
        ({"url": "not a url"}, "url"),
        ({"events": []}, "events"),
        ({"events": ["task.exploded"]}, "events.0"),
        ({"events": "task.failed"}, "events"),
        ({"filters": {"queue": "x"}}, "filters"),
        ({"filters": {"dag_id": ["a", "b"]}}, "filters.dag_id"),
        ({"headers": {"X-Count": 3}}, "headers.X-Count"),
        ({"headers": {"Bad Header": "x"}}, "headers"),
        ({"headers": {"X-Service-Signature": "forged"}}, "headers"),
        ({"headers": {"X-Evil": "a\r\nInjected: 1"}}, "headers"),
        ({"secret": None}, "secret"),
        ({"name": ""}, "name"),
    ],
)
def test_validation(api, roles, overrides, field):
    payload = assert_error(
        api.post("/api/webhooks", body(**overrides), format="json", **roles["admin"]), 400, "validation_error"
    )
    assert field in [e["field"] for e in payload["details"]["errors"]], payload
    assert not Webhook.objects.exists()


def test_every_problem_is_listed(api, roles):
    payload = assert_error(
        api.post("/api/webhooks", {}, format="json", **roles["admin"]), 400, "validation_error"
    )
    assert {e["field"] for e in payload["details"]["errors"]} >= {"name", "url", "events", "secret"}


def test_malformed_json_is_400(api, roles):
    response = api.post("/api/webhooks", data="{bad", content_type="application/json", **roles["admin"])
    assert_error(response, 400, "validation_error")


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/hook",
        "http://localhost/hook",
        "http://10.1.2.3/hook",
        "http://192.168.0.10/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/hook",
        "http://0.0.0.0/hook",
    ],
)
def test_ssrf_private_targets_are_refused(api, roles, settings, url):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    payload = assert_error(
        api.post("/api/webhooks", body(url=url), format="json", **roles["admin"]), 400, "validation_error"
    )
    assert payload["details"]["field"] == "url"
    assert "private" in payload["message"] or "resolve" in payload["message"]


def test_public_target_is_accepted_with_guard_on(api, roles, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    response = api.post(
        "/api/webhooks", body(url="http://93.184.215.14/hook"), format="json", **roles["admin"]
    )
    assert response.status_code == 201, response.content


def test_deliveries_listing_roles_and_404(api, roles):
    webhook_id = api.post("/api/webhooks", body(), format="json", **roles["admin"]).json()["id"]
    response = api.get(f"/api/webhooks/{webhook_id}/deliveries", **roles["viewer"])
    assert response.status_code == 200
    assert response.json() == {"deliveries": [], "total": 0, "limit": 50, "offset": 0}
    assert_error(api.get(f"/api/webhooks/{webhook_id}/deliveries"), 401, "not_authenticated")
    assert_error(api.get("/api/webhooks/wh_nope/deliveries", **roles["viewer"]), 404, "not_found")
