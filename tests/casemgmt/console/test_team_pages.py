"""Console pages for work distribution, through Django's test client: bulk actions from the inbox
and the case list, comments on the case page, and out of office on the preferences page."""

from __future__ import annotations

import pytest
from django.test import Client

from casemgmt.accounts.models import User
from casemgmt.audit.models import AuditEvent
from casemgmt.cases.models import CaseComment
from casemgmt.workflows.models import CaseStep
from tests.casemgmt.console.conftest import signed_in
from tests.casemgmt.workflows.conftest import Flow

pytestmark = pytest.mark.django_db


def test_inbox_bulk_reassign_reports_successes_and_failures(api, admin_user, make_user, tenant):
    flow = Flow(api, admin_user)
    flow.workflow([{"id": "review", "name": "Review claim", "type": "task"}])
    cases = [flow.case({"amount": 1}) for _ in range(2)]
    target = make_user(tenant, permissions=["tasks:claim", "tasks:complete"], display_name="Tess Target")
    client = signed_in(admin_user)
    inbox = client.get("/console/").content.decode()
    assert 'form="bulk-tasks"' in inbox and "Tess Target" in inbox
    picked = [f"{c['id']}/review" for c in cases] + ["00000000-0000-0000-0000-000000000000/review"]
    result = client.post(
        "/console/tasks/bulk", {"action": "reassign", "task": picked, "assignTo": str(target.id)}
    )
    assert result.status_code == 200
    text = result.content.decode()
    assert "2 of 3 succeeded." in text and "Task not found." in text
    assert CaseStep.objects.filter(assigned_to=target).count() == 2

    released = client.post("/console/tasks/bulk", {"action": "release", "task": picked[:1]})
    assert "1 of 1 succeeded." in released.content.decode()  # tasks:assign releases another's task
    assert client.post("/console/tasks/bulk", {"action": "reassign"}).status_code == 400


def test_case_list_bulk_close_comments_and_german(api, admin_user, make_user, tenant):
    flow = Flow(api, admin_user)
    flow.workflow([{"id": "review", "name": "Review claim", "type": "task"}])
    case = flow.case({"amount": 1})
    client = signed_in(admin_user)
    assert 'form="bulk-cases"' in client.get("/console/cases").content.decode()
    page = client.get(f"/console/cases/{case['id']}").content.decode()
    assert 'id="case-comments"' in page and 'id="comment-body"' in page

    posted = client.post(f"/console/cases/{case['id']}/comments", {"body": "<script>x</script> done"})
    assert posted.status_code == 302
    assert CaseComment.objects.get(case_id=case["id"]).body == "<script>x</script> done"
    page = client.get(f"/console/cases/{case['id']}").content.decode()
    assert "&lt;script&gt;x&lt;/script&gt; done" in page and "<script>x</script>" not in page

    closed = client.post("/console/cases/bulk", {"action": "close", "case": [case["id"]]})
    assert "1 of 1 succeeded." in closed.content.decode()
    assert AuditEvent.objects.filter(tenant_id=tenant.id, action="case:closed").count() == 1

    User.objects.filter(pk=admin_user.pk).update(preferences={"language": "de"})
    german = signed_in(admin_user).get(f"/console/cases/{case['id']}").content.decode()
    assert "Kommentare" in german

    reader = signed_in(make_user(tenant, permissions=["cases:read"]))
    assert reader.post(f"/console/cases/{case['id']}/comments", {"body": "x"}).status_code == 403
    assert reader.post("/console/cases/bulk", {"action": "cancel", "case": [case["id"]]}).status_code == 403
    anonymous = Client().post(f"/console/cases/{case['id']}/comments", {"body": "x"})
    assert anonymous.status_code == 302 and "/console/login" in anonymous["Location"]


def test_out_of_office_on_the_preferences_page(admin_user, make_user, tenant, other_tenant):
    worker = make_user(tenant, permissions=["tasks:claim"], display_name="Wanda Worker")
    delegate = make_user(tenant, permissions=["tasks:claim"], display_name="Dora Delegate")
    client = signed_in(worker)
    page = client.get("/console/preferences").content.decode()
    assert 'id="away-from"' in page and "Dora Delegate" in page
    saved = client.post(
        "/console/out-of-office",
        {"from": "2020-01-01T09:00", "until": "2999-01-01T09:00", "delegateTo": str(delegate.id)},
    )
    assert saved.status_code == 302
    worker.refresh_from_db()
    assert worker.away_delegate_id == delegate.id
    assert "You are out of office now." in client.get("/console/preferences").content.decode()
    foreign = make_user(other_tenant, permissions=[])
    refused = client.post(
        "/console/out-of-office",
        {"from": "2020-01-01T09:00", "until": "2999-01-01T09:00", "delegateTo": str(foreign.id)},
    )
    assert refused.status_code == 400
    assert client.post("/console/out-of-office", {"clear": "1"}).status_code == 302
    worker.refresh_from_db()
    assert worker.away_until is None
