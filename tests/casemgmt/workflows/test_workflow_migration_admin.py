"""The Workflow admin's "Migrate open cases to this version": a small form, then the service behind
`POST /workflows/{id}/migrate`, its result in messages; `workflows:*` in the admin's own tenant."""

from __future__ import annotations

import pytest

from casemgmt.cases.models import Case
from casemgmt.workflows.models import CaseStep
from tests.casemgmt.conftest import admin_client
from tests.casemgmt.workflows.conftest import Flow
from tests.casemgmt.workflows.test_workflow_migration import V1, V2, live_cases

pytestmark = pytest.mark.django_db


def migrate(user, workflow_id: str, **form):
    body = {"action": "migrate_cases", "_selected_action": [workflow_id], **form}
    return admin_client(user).post("/admin/workflows/workflow/", body, follow=True)


def test_the_admin_migrates_a_case_and_reports_the_unmapped_one(flow: Flow):
    v1 = flow.workflow(V1)
    moved, stuck = live_cases(flow, v1["id"], count=2, on_b=1)
    v2 = flow.workflow(V2)

    asked = migrate(flow.admin, v2["id"])  # first the form, with the other versions to choose from
    page = asked.content.decode()
    assert 'name="fromVersion"' in page and f'<option value="{v1["version"]}"' in page
    assert f'<option value="{v2["version"]}"' not in page and "{#" not in page

    bad = migrate(flow.admin, v2["id"], fromVersion=v1["version"], stepMapping="{oops", caseIds="")
    assert "Not valid JSON at line 1" in bad.content.decode()

    done = migrate(flow.admin, v2["id"], fromVersion=v1["version"], stepMapping='{"a": "a2"}', caseIds="")
    said = [str(m) for m in done.context["messages"]]
    assert any(m.startswith("1 migrated to") for m in said)
    assert any(m.startswith("1 failed: ") and stuck in m and "unmapped_step" in m for m in said)
    assert str(Case.objects.get(pk=moved).workflow_version_id) == v2["id"]
    assert str(Case.objects.get(pk=stuck).workflow_version_id) == v1["id"]
    assert CaseStep.objects.get(case_id=moved, status="active").step_id == "a2"


def test_the_migrate_action_needs_workflows_all_in_the_own_tenant(
    flow: Flow, make_user, tenant, other_tenant
):
    v1 = flow.workflow(V1)
    (case_id,) = live_cases(flow, v1["id"], count=1, on_b=0)
    v2 = flow.workflow(V2)
    form = {"fromVersion": v1["version"], "stepMapping": '{"a": "a2"}', "caseIds": ""}

    reader = make_user(tenant, permissions=["workflows:read", "workflows:publish"], is_staff=True)
    listing = admin_client(reader).get("/admin/workflows/workflow/").content.decode()
    assert 'value="publish"' in listing and 'value="migrate_cases"' not in listing
    assert "No action selected" in migrate(reader, v2["id"], **form).content.decode()
    stranger = make_user(other_tenant, roles=["admin"], is_staff=True)
    said = [str(m) for m in migrate(stranger, v2["id"], **form).context["messages"]]
    assert said == ["Choose exactly one published workflow."]  # the other tenant's workflow is not theirs
    assert str(Case.objects.get(pk=case_id).workflow_version_id) == v1["id"]
