"""ORCH_SECURITY_ENABLED: API keys, JWT bearer tokens, Django session, and the switch itself."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from orchestrator.security.models import ApiKey
from shared.auth import apikeys
from tests.orchestrator.security.helpers import EXPIRED, api_key_headers, bearer

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def security_on(settings):
    settings.ORCH_SECURITY_ENABLED = True


def assert_error(response, status, code):
    assert response.status_code == status, response.content
    body = response.json()
    assert body["error"] is True and body["code"] == code and isinstance(body["message"], str)
    assert isinstance(body["details"], dict)


def create_key(name: str, role: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    call_command("create_api_key", "--name", name, "--role", role, stdout=out, stderr=err)
    assert "shown only once" in err.getvalue()
    return out.getvalue().strip()


def test_create_api_key_prints_the_key_once_and_stores_only_its_hash(api):
    plaintext = create_key("ci", "viewer")
    row = ApiKey.objects.get(name="ci")
    assert plaintext.startswith("ork_") and row.role == "viewer"
    assert row.key_hash == apikeys.hash_key(plaintext) and plaintext not in (row.key_hash, row.prefix)
    assert api.get("/api/webhooks", HTTP_X_API_KEY=plaintext).status_code == 200
    assert ApiKey.objects.get(name="ci").last_used_at is not None


def test_create_api_key_refuses_a_duplicate_name_and_an_unknown_role():
    create_key("dup", "admin")
    with pytest.raises(CommandError, match="already exists"):
        create_key("dup", "viewer")
    with pytest.raises(CommandError):
        call_command(
            "create_api_key", "--name", "x", "--role", "root", stdout=io.StringIO(), stderr=io.StringIO()
        )


def test_revoked_key_is_401(api):
    plaintext = create_key("gone", "admin")
    assert api.get("/api/status", HTTP_X_API_KEY=plaintext).status_code == 200
    out = io.StringIO()
    call_command("revoke_api_key", "--name", "gone", stdout=out)
    assert "Revoked" in out.getvalue()
    assert_error(api.get("/api/status", HTTP_X_API_KEY=plaintext), 401, "not_authenticated")
    with pytest.raises(CommandError):
        call_command("revoke_api_key", "--name", "never-existed", stdout=io.StringIO())


@pytest.mark.parametrize("role", ["viewer", "operator", "admin"])
def test_valid_jwt_authenticates_with_its_role(api, role):
    assert api.get("/api/status", **bearer(role)).status_code == 200
    created = api.post(
        "/api/webhooks",
        {"name": "n", "url": "http://127.0.0.1:9/x", "events": ["task.failed"], "secret": "s"},
        format="json",
        **bearer(role),
    )
    assert created.status_code == (201 if role == "admin" else 403), created.content


@pytest.mark.parametrize(
    "overrides",
    [
        EXPIRED,
        {"audience": "someone-else"},
        {"issuer": "another-issuer"},
        {"signing_key": "not-the-configured-key-but-32-bytes-long!"},
    ],
    ids=["expired", "wrong-audience", "wrong-issuer", "wrong-key"],
)
def test_bad_jwt_is_401(api, overrides):
    assert_error(api.get("/api/status", **bearer("admin", **overrides)), 401, "not_authenticated")


@pytest.mark.parametrize("header", ["Bearer", "Basic dXNlcjpwYXNz", "Bearer not.a.jwt"])
def test_malformed_authorization_is_401(api, header):
    assert_error(api.get("/api/status", HTTP_AUTHORIZATION=header), 401, "not_authenticated")


def test_jwt_without_a_role_claim_is_403(api):
    assert_error(api.get("/api/status", **bearer(None)), 403, "permission_denied")


def test_anonymous_is_401_with_www_authenticate(api):
    response = api.get("/api/status")
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_health_is_exempt(api):
    assert api.get("/api/health").status_code == 200


def test_security_off_needs_no_credentials_and_ignores_stale_ones(api, settings):
    settings.ORCH_SECURITY_ENABLED = False
    assert api.get("/api/status").status_code == 200
    assert api.get("/api/status", HTTP_X_API_KEY="ork_stale-key-from-elsewhere-xxxxxx").status_code == 200
    created = api.post(
        "/api/webhooks",
        {"name": "n", "url": "http://127.0.0.1:9/", "events": ["dag.failed"], "secret": "s"},
        format="json",
    )
    assert created.status_code == 201


def login(client, username: str, *, staff: bool, superuser: bool) -> None:
    get_user_model().objects.create_user(
        username=username, password="a-long-enough-password", is_staff=staff, is_superuser=superuser
    )
    response = client.post(
        "/admin/login/", {"username": username, "password": "a-long-enough-password", "next": "/admin/"}
    )
    assert response.status_code == 302, response.content
    assert "sessionid" in client.cookies


def test_admin_login_session_cookie_authenticates_api_calls(client):
    login(client, "root", staff=True, superuser=True)
    assert client.get("/api/status").status_code == 200
    created = client.post(
        "/api/webhooks",
        {"name": "n", "url": "http://127.0.0.1:9/", "events": ["dag.failed"], "secret": "s"},
        content_type="application/json",
    )
    assert created.status_code == 201, created.content


def test_staff_session_is_operator(client):
    login(client, "ops", staff=True, superuser=False)
    assert client.get("/api/webhooks").status_code == 200
    response = client.post(
        "/api/webhooks",
        {"name": "n", "url": "http://127.0.0.1:9/", "events": ["dag.failed"], "secret": "s"},
        content_type="application/json",
    )
    assert_error(response, 403, "permission_denied")


def test_session_after_logout_is_401(client):
    login(client, "bye", staff=True, superuser=True)
    client.post("/admin/logout/")
    assert_error(client.get("/api/status"), 401, "not_authenticated")


def test_api_key_roles(api):
    viewer, operator, admin = (api_key_headers(r) for r in ("viewer", "operator", "admin"))
    body = {"name": "n", "url": "http://127.0.0.1:9/", "events": ["dag.failed"], "secret": "s"}
    assert api.get("/api/webhooks", **viewer).status_code == 200
    assert_error(api.post("/api/webhooks", body, format="json", **viewer), 403, "permission_denied")
    assert_error(api.post("/api/webhooks", body, format="json", **operator), 403, "permission_denied")
    assert api.post("/api/webhooks", body, format="json", **admin).status_code == 201


def test_a_method_the_route_lacks_is_405_even_without_credentials(api):
    assert_error(api.delete("/api/status"), 405, "method_not_allowed")
    assert_error(
        api.put("/api/webhooks", {}, format="json", **api_key_headers("viewer")), 405, "method_not_allowed"
    )
