"""Security headers on JSON and HTML answers, HSTS only over HTTPS, and CSRF on the routes a session
cookie authenticates (console, Django admin) but not on bearer-token API routes."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.casemgmt.conftest import PASSWORD

pytestmark = pytest.mark.django_db


def common_headers(response) -> None:
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["X-Frame-Options"] == "DENY"


def test_json_and_html_answers_carry_the_security_headers():
    client = Client()
    api = client.get("/health")
    common_headers(api)
    page = client.get("/console/login")
    common_headers(page)
    assert "frame-ancestors 'none'" in page["Content-Security-Policy"]
    assert "script-src 'self'" in page["Content-Security-Policy"]
    assert "Strict-Transport-Security" not in api  # plain HTTP: no HSTS


def test_hsts_over_https(settings):
    settings.SECURE_HSTS_SECONDS = 31536000
    response = Client().get("/health", secure=True)
    assert response["Strict-Transport-Security"] == "max-age=31536000"


def signed_in_strict(user) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.get("/console/login")  # sets the CSRF cookie
    token = client.cookies["csrftoken"].value
    response = client.post(
        "/console/login", {"email": user.email, "password": PASSWORD, "csrfmiddlewaretoken": token}
    )
    assert response.status_code == 302, response.content
    return client


def test_console_post_without_the_csrf_token_is_403(admin_user):
    client = signed_in_strict(admin_user)
    assert client.post("/console/logout").status_code == 403
    assert client.get("/console/").status_code == 200  # still signed in
    token = client.cookies["csrftoken"].value
    assert client.post("/console/logout", {"csrfmiddlewaretoken": token}).status_code == 302


def test_anonymous_console_post_without_the_token_is_403(admin_user):
    assert Client(enforce_csrf_checks=True).post("/console/logout").status_code == 403


def test_django_admin_login_without_the_csrf_token_is_403(admin_user):
    response = Client(enforce_csrf_checks=True).post(
        "/admin/login/", {"username": admin_user.email, "password": PASSWORD}
    )
    assert response.status_code == 403


def test_bearer_token_api_routes_need_no_csrf_token(admin_user):
    from casemgmt.accounts.tokens import issue_for

    client = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Bearer {issue_for(admin_user).token}")
    response = client.post(
        "/reports", {"name": "n", "query": "SELECT 1 AS one"}, content_type="application/json"
    )
    assert response.status_code == 201, response.content
