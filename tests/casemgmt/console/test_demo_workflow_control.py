"""The demo tenant's claim workflow (examples/casemgmt/claim.yaml) uses a rework loop, a sub-case
and a timer, and its admin can publish a fix and move the open claims onto it."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from casemgmt.accounts.services import auth_login
from casemgmt.cases.models import Case
from tests.casemgmt.workflows.conftest import ok

pytestmark = pytest.mark.django_db


def test_the_demo_claim_loops_inspects_waits_and_its_open_claims_move_to_a_fix(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    call_command("ensure_demo_tenant", "--base-url", "http://localhost:18000", stdout=io.StringIO())
    creds = json.loads((tmp_path / "demo-credentials.json").read_text())
    issued, admin = auth_login(email=creds["email"], password=creds["password"], ip="127.0.0.1")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.token}")
    [workflow] = ok(client.get("/workflows?caseTypeKey=insurance_claim"))["data"]
    steps = {step["id"]: step for step in workflow["steps"]}
    assert steps["decide"]["routes"] == {"rework": "review"}
    assert steps["inspection"]["type"] == "case" and steps["objection_period"]["type"] == "timer"

    claim = Case.objects.get(tenant_id=admin.tenant_id, display_name="Water damage in the kitchen")
    review = {"data": {"approved": True, "assessed": 3000}}
    ok(client.post(f"/tasks/{claim.id}/review/complete", review, format="json"))
    child = ok(client.get(f"/cases/{claim.id}"))["children"][0]  # 3,200 is over the inspection limit
    ok(client.post(f"/cases/{child['id']}/close", {"outcome": "confirmed"}, format="json"))
    ok(client.post(f"/tasks/{claim.id}/decide/complete", {"data": {}, "outcome": "rework"}, format="json"))
    detail = ok(client.get(f"/cases/{claim.id}"))
    assert {s["id"]: s["status"] for s in detail["workflow"]["steps"]}["review"] == "active"
    assert [h["stepId"] for h in detail["workflow"]["history"]] == ["review", "inspection", "decide"]

    fix = {**{k: workflow[k] for k in ("caseTypeKey", "name", "steps")}}
    fix["steps"] = [dict(s, after="PT5M") if s["id"] == "objection_period" else s for s in workflow["steps"]]
    draft = ok(client.post("/workflows", fix, format="json"), 201)
    ok(client.post(f"/workflows/{draft['id']}/publish"))
    moved = ok(
        client.post(f"/workflows/{draft['id']}/migrate", {"fromVersion": 1, "stepMapping": {}}, format="json")
    )
    assert moved == {"migrated": 3, "failed": []}  # the three open claims (the inspection is no claim)
