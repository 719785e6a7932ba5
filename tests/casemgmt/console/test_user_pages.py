"""The dashboard and preferences pages, through Django's test client."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from casemgmt.accounts.selectors import preferences_of
from tests.casemgmt.console.conftest import signed_in

pytestmark = pytest.mark.django_db


def _stored(user) -> dict:
    user.refresh_from_db()
    return preferences_of(user)


def _chart_data(page: str) -> dict:
    match = re.search(r'<script id="chart-data" type="application/json">(.*?)</script>', page, re.S)
    assert match, page
    return json.loads(match.group(1))


def test_dashboard_shows_the_case_figures_as_charts_and_tables(waiting_case, admin_user):
    page = signed_in(admin_user).get("/console/dashboard")
    assert page.status_code == 200
    text = page.content.decode()
    charts = _chart_data(text)
    status = dict(zip(charts["status"]["labels"], charts["status"]["values"], strict=True))
    assert status["Active"] == 1  # the status in words, in the page's language
    assert sum(charts["type"]["values"]) == 1 and charts["ageing"]["values"] == [1]
    assert 'canvas data-chart="status"' in text and "chart-4.6.1.umd.min.js" in text
    assert 'id="chart-type-table"' in text


def test_dashboard_needs_cases_and_reports_read(waiting_case, tenant, make_user, other_tenant):
    from casemgmt.accounts.models import User

    cases_only = signed_in(make_user(tenant, permissions=["cases:read"]))
    assert cases_only.get("/console/dashboard").status_code == 403
    assert b"Dashboard</a>" not in cases_only.get("/console/cases").content
    outsider = signed_in(User.objects.get(tenant=other_tenant, roles__name="admin"))
    assert _chart_data(outsider.get("/console/dashboard").content.decode())["ageing"]["values"] == []
    anonymous = Client().get("/console/dashboard")
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/console/login")


def test_preferences_are_saved_and_apply_to_every_page(waiting_case, admin_user):
    client = signed_in(admin_user)
    form = client.get("/console/preferences")
    assert form.status_code == 200 and "High Contrast Dark" in form.content.decode()
    body = {
        "theme": "High Contrast Dark",
        "language": "de",
        "timezone": "Europe/Berlin",
        "itemsPerPage": "10",
    }
    saved = client.post("/console/preferences", body)
    assert saved.status_code == 302 and saved["Location"] == "/console/preferences?saved=1"
    assert _stored(admin_user) == {
        "theme": "High Contrast Dark",
        "language": "de",
        "timezone": "Europe/Berlin",
        "itemsPerPage": 10,
        "emailNotifications": False,
    }
    for url in ("/console/", f"/console/cases/{waiting_case['id']}", "/console/preferences?saved=1"):
        page = client.get(url).content.decode()
        assert '<html lang="de" data-scheme="dark" data-time-zone="Europe/Berlin">' in page, url
        assert "--color-bg: #000000;" in page and "--color-primary: #ffff00;" in page
    assert "Einstellungen gespeichert." in client.get("/console/preferences?saved=1").content.decode()


def test_invalid_preferences_are_a_400_with_the_apis_messages(admin_user):
    client = signed_in(admin_user)
    body = {"theme": "Neon", "language": "x", "timezone": "Mars/Olympus", "itemsPerPage": "500"}
    page = client.post("/console/preferences", body)
    assert page.status_code == 400
    text = page.content.decode()
    for message in ("No theme named", "language tag", "Unknown time zone", "less than or equal to 100"):
        assert message in text, message
    assert 'aria-describedby="h-timezone e-timezone" aria-invalid="true"' in text
    assert _stored(admin_user)["theme"] == "Light"


def test_preferences_are_per_user_and_need_a_session(admin_user, tenant, make_user, other_tenant):
    colleague = make_user(tenant, permissions=["cases:read"])
    assert signed_in(colleague).post("/console/preferences", {"theme": "Dark"}).status_code == 302
    assert _stored(colleague)["theme"] == "Dark" and _stored(admin_user)["theme"] == "Light"
    from casemgmt.accounts.models import User

    outsider = User.objects.get(tenant=other_tenant, roles__name="admin")
    # A theme is looked up in the user's own tenant only.
    assert signed_in(outsider).post("/console/preferences", {"theme": "No such"}).status_code == 400
    anonymous = Client().post("/console/preferences", {"theme": "Dark"})
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/console/login")
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(admin_user, backend="casemgmt.accounts.backends.EmailBackend")
    assert strict.post("/console/preferences", {"theme": "Dark"}).status_code == 403
