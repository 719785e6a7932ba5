"""`make run`'s first-start command: a demo tenant when there is none, and login lines that name
where the service really listens."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.test import Client

from casemgmt.accounts.services import auth_login
from casemgmt.tenancy.models import Tenant

pytestmark = pytest.mark.django_db


def test_creates_the_demo_tenant_once_and_prints_a_working_login(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    out = io.StringIO()
    call_command("ensure_demo_tenant", "--base-url", "http://localhost:18000/", stdout=out)
    call_command("ensure_demo_tenant", "--base-url", "http://localhost:18000", stdout=io.StringIO())

    assert Tenant.objects.filter(name="Demo").count() == 1
    printed = out.getvalue()
    assert "curl -s -X POST http://localhost:18000/auth/login" in printed
    assert "localhost:8000" not in printed
    creds = json.loads((tmp_path / "demo-credentials.json").read_text())
    assert creds["password"] in printed
    issued, user = auth_login(email=creds["email"], password=creds["password"], ip="127.0.0.1")
    assert issued.token and user.email == creds["email"]
    # Work waiting in the console from the first sign-in, without any API call.
    inbox = Client()
    assert inbox.post("/console/login", creds).status_code == 302
    page = inbox.get("/console/").content.decode()
    assert page.count("Review claim</a>") == 3 and "Broken window" in page
