"""Security headers on the orchestrator, HSTS only over HTTPS, and CSRF on session-authenticated
API calls (API keys and bearer tokens need none)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = pytest.mark.django_db
WEBHOOK = {"name": "n", "url": "http://127.0.0.1:9/", "events": ["dag.failed"], "secret": "s"}


def test_json_and_html_answers_carry_the_security_headers(settings):
    client = Client()
    for response in (client.get("/api/health"), client.get("/docs")):
        assert response["X-Content-Type-Options"] == "nosniff"
        assert response["Referrer-Policy"] == "same-origin"
        assert response["X-Frame-Options"] == "DENY"
        assert "Strict-Transport-Security" not in response
    assert "frame-ancestors 'none'" in client.get("/docs")["Content-Security-Policy"]


def test_hsts_over_https(settings):
    settings.SECURE_HSTS_SECONDS = 600
    assert Client().get("/api/health", secure=True)["Strict-Transport-Security"] == "max-age=600"


def strict_session(settings) -> Client:
    settings.ORCH_SECURITY_ENABLED = True
    get_user_model().objects.create_user(
        username="root", password="a-long-enough-password", is_staff=True, is_superuser=True
    )
    client = Client(enforce_csrf_checks=True)
    client.get("/admin/login/")
    token = client.cookies["csrftoken"].value
    response = client.post(
        "/admin/login/",
        {
            "username": "root",
            "password": "a-long-enough-password",
            "next": "/admin/",
            "csrfmiddlewaretoken": token,
        },
    )
    assert response.status_code == 302, response.content
    return client


def test_session_authenticated_write_without_the_csrf_token_is_403(settings):
    client = strict_session(settings)
    refused = client.post("/api/webhooks", WEBHOOK, content_type="application/json")
    assert refused.status_code == 403 and refused.json()["error"] is True
    token = client.cookies["csrftoken"].value
    created = client.post("/api/webhooks", WEBHOOK, content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert created.status_code == 201, created.content
    assert client.get("/api/webhooks").status_code == 200  # reads need no token


def test_admin_login_without_the_csrf_token_is_403():
    response = Client(enforce_csrf_checks=True).post("/admin/login/", {"username": "x", "password": "y"})
    assert response.status_code == 403
