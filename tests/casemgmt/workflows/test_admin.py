"""Django admin: workflows are viewed, published and withdrawn through the services; steps read-only."""

from __future__ import annotations

from casemgmt.workflows.models import CaseStep, Workflow
from tests.casemgmt.conftest import admin_client
from tests.casemgmt.workflows.conftest import audit_actions, ok, task_step


def draft(flow, steps) -> Workflow:
    body = {"caseTypeKey": flow.key, "name": "Drafted", "steps": steps}
    return Workflow.objects.get(pk=ok(flow.client.post("/workflows", body, format="json"), 201)["id"])


def act(client, action: str, *workflows: Workflow, **extra: str):
    return client.post(
        "/admin/workflows/workflow/",
        {"action": action, "_selected_action": [str(w.pk) for w in workflows], **extra},
        follow=True,
    )


def publish(client, *workflows: Workflow):
    """Publish, past the confirmation page."""
    return act(client, "publish", *workflows, confirmed="yes")


def test_tenant_admin_publishes_then_withdraws_a_workflow(flow, admin_user):
    workflow = draft(flow, [task_step("review")])
    client = admin_client(admin_user)
    page = client.get(f"/admin/workflows/workflow/{workflow.pk}/change/")
    assert page.status_code == 200 and b"review" in page.content  # the definition is shown
    asked = act(client, "publish", workflow)  # publishing changes the default: asked first
    assert b"Publish these drafts?" in asked.content
    assert b"Drafted version 1 becomes the default for new" in asked.content
    workflow.refresh_from_db()
    assert workflow.status == Workflow.DRAFT
    response = publish(client, workflow)
    assert "Drafted version 1 published." in [str(m) for m in response.context["messages"]]
    workflow.refresh_from_db()
    assert (workflow.status, workflow.is_default) == (Workflow.PUBLISHED, True)
    act(client, "withdraw", workflow)
    workflow.refresh_from_db()
    assert workflow.status == Workflow.WITHDRAWN
    assert audit_actions(admin_user.tenant_id, f"workflows/{workflow.pk}")[-2:] == [
        "workflow:published",
        "workflow:withdrawn",
    ]


def test_a_refused_publish_is_a_message_and_the_draft_stays(flow, admin_user):
    workflow = draft(flow, [task_step("review", role="no_such_role")])
    response = publish(admin_client(admin_user), workflow)
    assert response.status_code == 200
    errors = [str(m) for m in response.context["messages"] if m.level_tag == "error"]
    assert errors and "Drafted" in errors[0]
    workflow.refresh_from_db()
    assert workflow.status == Workflow.DRAFT


def test_a_reader_of_workflows_cannot_publish(flow, make_user, tenant):
    workflow = draft(flow, [task_step("review")])
    reader = make_user(tenant, permissions=["workflows:read"], is_staff=True)
    client = admin_client(reader)
    listing = client.get("/admin/workflows/workflow/")
    assert listing.status_code == 200 and b'value="publish"' not in listing.content
    publish(client, workflow)
    workflow.refresh_from_db()
    assert workflow.status == Workflow.DRAFT


def test_case_steps_are_read_only_and_filter_to_tasks(flow, admin_user):
    flow.workflow([task_step("review")])
    case = flow.case()
    client = admin_client(admin_user)
    tasks = client.get("/admin/workflows/casestep/", {"is_task__exact": "1"})
    assert [(str(s.case_id), s.step_id) for s in tasks.context["cl"].queryset] == [(case["id"], "review")]
    step = CaseStep.objects.get(case_id=case["id"], step_id="review")
    page = client.get(f"/admin/workflows/casestep/{step.pk}/change/")
    assert page.status_code == 200 and b'name="_save"' not in page.content
    assert client.post(f"/admin/workflows/casestep/{step.pk}/delete/", {"post": "yes"}).status_code == 403
