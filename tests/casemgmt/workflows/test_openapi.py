"""The OpenAPI document describes exactly the fields the workflow, task and prompt template
endpoints answer with (their documentation-only serializers live in each app's openapi.py)."""

import pytest

from tests.casemgmt.workflows.conftest import ok, task_step

pytestmark = pytest.mark.django_db


def documented(components, name):
    return set(components[name]["properties"])


def test_documented_fields_match_real_responses(api, admin_user, flow):
    components = ok(api(None).get("/openapi.json"))["components"]["schemas"]
    client = api(admin_user)
    workflow = flow.workflow([task_step("review")])
    assert set(workflow) == documented(components, "WorkflowOut")
    assert set(ok(client.get("/workflows"))) == documented(components, "WorkflowPageOut")

    case = flow.case()
    inbox = ok(client.get("/tasks/inbox"))
    assert set(inbox) == documented(components, "InboxPageOut")
    assert set(inbox["data"][0]) == documented(components, "TaskOut")
    base = f"/tasks/{case['id']}/review"
    assert set(ok(client.get(base))) == documented(components, "FullTaskOut")
    draft = ok(client.post(f"{base}/draft", {"data": {"approved": True}}, format="json"))
    assert set(draft) == documented(components, "DraftOut")

    template = ok(client.post("/prompt-templates", {"name": "t", "template": "Hi"}, format="json"), 201)
    assert set(template) == documented(components, "TemplateOut")
