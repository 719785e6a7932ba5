"""`make run`'s orchestrator login: an admin account and a demo DAG on an empty orchestrator,
printed each start, never created twice; the printed login signs in to the console."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from orchestrator.audit.models import AuditEvent
from orchestrator.definitions.models import Dag

pytestmark = pytest.mark.django_db


def run_command(*args: str) -> str:
    out = io.StringIO()
    call_command("ensure_console_admin", *args, stdout=out)
    return out.getvalue()


def test_first_start_creates_the_admin_and_demo_dag_and_prints_a_working_login(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    first = run_command("--demo-dag", "--base-url", "http://localhost:3999")
    assert "http://localhost:3999/console/" in first and "created the demo DAG" in first
    username, password = re.search(r"Username (\S+)  password (\S+)", first).groups()
    assert json.loads((tmp_path / "console-credentials.json").read_text()) == {
        "username": username,
        "password": password,
    }
    assert User.objects.get(username=username).is_superuser
    assert AuditEvent.objects.filter(action="user.created", resource=f"users/{username}").exists()
    assert Dag.objects.get(pk="demo").tasks == [{"id": "demo-report", "parameters": {}}]
    client = Client()
    assert client.post("/console/login", {"username": username, "password": password}).status_code == 302
    assert b"demo-fetch" in client.get("/console/dags/demo").content
    again = run_command("--demo-dag")
    assert "created the demo DAG" not in again and password in again
    assert User.objects.count() == 1


def test_an_orchestrator_with_users_gets_no_new_account(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    User.objects.create_user(username="someone", password="x")
    assert "users exist already" in run_command()
    assert User.objects.count() == 1 and not Dag.objects.exists()
