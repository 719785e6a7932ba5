"""The console's case page shows the new step types (a label and data attributes a diagram can use),
a timer's fire time, a wait's message, a loop's round and the parent and child cases, in English and
German."""

from __future__ import annotations

import pytest

from tests.casemgmt.console.conftest import signed_in
from tests.casemgmt.workflows.conftest import Flow, ok, task_step

pytestmark = pytest.mark.django_db


def test_the_case_page_shows_timers_waits_loops_and_related_cases(api, admin_user):
    flow = Flow(api, admin_user)
    flow.workflow([
        task_step("submit"),
        task_step("review", outcomes=["approve", "rework"], routes={"rework": "submit"}),
        {"id": "inspect", "name": "Site inspection", "type": "case", "caseTypeKey": flow.key,
         "data": {"title": "Inspection of {{case_number}}"}, "condition": "gt case_data.amount 100"},
        {"id": "cool", "name": "Cool off", "type": "timer", "after": "PT48H", "dependsOn": ["review"]},
        {"id": "docs", "name": "Documents", "type": "wait", "message": "documents", "dependsOn": ["review"]},
    ])  # fmt: skip
    case = flow.case({"amount": 500, "title": "Roof"})
    done = {"data": {"approved": True}}
    ok(flow.client.post(f"/tasks/{case['id']}/submit/complete", done, format="json"))
    ok(flow.client.post(f"/tasks/{case['id']}/review/complete", {**done, "outcome": "rework"}, format="json"))
    ok(flow.client.post(f"/tasks/{case['id']}/submit/complete", done, format="json"))
    ok(
        flow.client.post(
            f"/tasks/{case['id']}/review/complete", {**done, "outcome": "approve"}, format="json"
        )
    )
    steps = flow.steps(case["id"])
    child_id = steps["inspect"]["childCaseId"]
    child = ok(flow.client.get(f"/cases/{child_id}"))

    client = signed_in(admin_user)
    page = client.get(f"/console/cases/{case['id']}").content.decode()
    assert 'data-step-type="timer"' in page and 'data-fire-at="' in page and "fires at" in page
    assert 'data-step-type="wait"' in page and 'data-message="documents"' in page
    assert "waiting for message “documents”" in page
    assert f'data-child-case="{child_id}"' in page and f"child case {child['caseNumber']}" in page
    assert 'data-iteration="2"' in page and "round 2" in page
    assert "Related cases" in page and f'href="/console/cases/{child_id}"' in page
    # The workflow diagram names what each step waits for, and the rework loop with its round.
    assert "wait: documents" in page and f"case {child['caseNumber']}" in page and "task ↺ · round 2" in page
    child_page = client.get(f"/console/cases/{child_id}").content.decode()
    assert f'href="/console/cases/{case["id"]}"' in child_page and "Parent" in child_page

    prefs = {"theme": "Light", "language": "de", "timezone": "Europe/Berlin", "itemsPerPage": "10"}
    assert client.post("/console/preferences", prefs).status_code == 302
    german = client.get(f"/console/cases/{case['id']}").content.decode()
    assert "Zeitgeber" in german and "läuft ab am" in german and "wartet auf Nachricht „documents“" in german
    assert (
        "Runde 2" in german and "Verbundene Fälle" in german and f"Teilfall {child['caseNumber']}" in german
    )
