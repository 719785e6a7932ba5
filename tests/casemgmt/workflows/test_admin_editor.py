"""Django admin: a workflow draft's steps in the JSON editor (pretty-printed, a syntax error named
by line and column and kept as typed, publish rules enforced on save) and its steps diagram."""

from __future__ import annotations

import json

from casemgmt.workflows.models import Workflow
from tests.casemgmt.conftest import admin_client
from tests.casemgmt.workflows.conftest import ok, task_step


def draft(flow, steps) -> Workflow:
    body = {"caseTypeKey": flow.key, "name": "Drafted", "steps": steps}
    return Workflow.objects.get(pk=ok(flow.client.post("/workflows", body, format="json"), 201)["id"])


def url(workflow: Workflow) -> str:
    return f"/admin/workflows/workflow/{workflow.pk}/change/"


def step_errors(response) -> list[str]:
    return [str(e) for e in response.context["adminform"].form.errors["steps"]]


def test_the_draft_editor_pretty_prints_and_draws_the_steps(flow, admin_user):
    workflow = draft(flow, [task_step("submit"), task_step("review")])
    page = admin_client(admin_user).get(url(workflow)).content.decode()
    assert 'class="json-editor"' in page and "\n  {\n    &quot;id&quot;: &quot;submit&quot;" in page
    assert 'aria-label="Steps of the workflow"' in page
    assert 'id="node-submit"' in page and 'id="node-review"' in page
    assert 'data-from="submit" data-to="review"' in page


def test_a_syntax_error_names_line_and_column_and_keeps_the_text(flow, admin_user):
    workflow = draft(flow, [task_step("submit")])
    typed = '[\n  {"id": "submit",\n   "type" "task"}\n]'
    response = admin_client(admin_user).post(url(workflow), {"name": "Drafted", "steps": typed})
    assert response.status_code == 200
    [error] = step_errors(response)
    assert error.startswith("Not valid JSON at line 3, column 11: Expecting ':' delimiter")
    assert "[\n  {&quot;id&quot;: &quot;submit&quot;,\n   &quot;type&quot; &quot;task&quot;}\n]" in (
        response.content.decode()
    )
    german = admin_client(admin_user).post(
        url(workflow), {"name": "Drafted", "steps": typed}, HTTP_ACCEPT_LANGUAGE="de"
    )
    assert "Kein gültiges JSON in Zeile 3, Spalte 11: Expecting" in german.content.decode()


def test_a_publish_rule_is_refused_and_a_valid_edit_saves(flow, admin_user):
    workflow = draft(flow, [task_step("submit")])
    client = admin_client(admin_user)
    refused = client.post(url(workflow), {"name": "X", "steps": json.dumps([task_step("a"), task_step("a")])})
    assert refused.status_code == 200 and any("a" in e for e in step_errors(refused))
    not_a_list = client.post(url(workflow), {"name": "X", "steps": '{"id": "a"}'})
    assert step_errors(not_a_list) == ["steps: must be a list of step objects"]
    workflow.refresh_from_db()
    assert workflow.name == "Drafted"
    saved = client.post(url(workflow), {"name": "Renamed", "steps": json.dumps([task_step("check")])})
    assert saved.status_code == 302, saved.content.decode()[-2000:]
    workflow.refresh_from_db()
    assert workflow.name == "Renamed" and [s["id"] for s in workflow.definition["steps"]] == ["check"]


def test_other_tenants_and_non_admins_cannot_reach_the_editor(flow, make_user, tenant, other_tenant):
    workflow = draft(flow, [task_step("submit")])
    stranger = admin_client(make_user(other_tenant, roles=["admin"], is_staff=True))
    assert stranger.get(url(workflow)).status_code in (302, 404)
    assert stranger.post(url(workflow), {"name": "X", "steps": "[]"}).status_code in (302, 403, 404)
    clerk = admin_client(make_user(tenant, permissions=["cases:read"], is_staff=True))
    assert clerk.get(url(workflow)).status_code in (302, 403)
    workflow.refresh_from_db()
    assert workflow.name == "Drafted"


def test_a_published_version_shows_its_diagram_but_no_editor(flow, admin_user):
    workflow = draft(flow, [task_step("submit"), task_step("review", dependsOn=["submit"])])
    client = admin_client(admin_user)
    client.post(
        "/admin/workflows/workflow/",
        {"action": "publish", "_selected_action": [str(workflow.pk)], "confirmed": "yes"},
    )
    workflow.refresh_from_db()
    assert workflow.status == Workflow.PUBLISHED
    page = client.get(url(workflow)).content.decode()
    assert 'name="steps"' not in page and 'name="_save"' not in page
    assert 'id="node-review"' in page and 'data-from="submit" data-to="review"' in page
