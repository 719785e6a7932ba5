"""The case page's "Send message" form on an active `wait` step: it completes the step as
`POST /cases/{id}/messages/{name}` does, in words when nothing waits or the data is not JSON, for
users with `cases:update` of the case's tenant only."""

from __future__ import annotations

import pytest

from casemgmt.workflows.models import CaseStep
from tests.casemgmt.console.conftest import signed_in
from tests.casemgmt.workflows.conftest import Flow, ok, task_step

pytestmark = pytest.mark.django_db


def waiting_case(api, admin_user) -> tuple[Flow, str]:
    flow = Flow(api, admin_user)
    flow.workflow([task_step("first"), {"id": "docs", "name": "Docs", "type": "wait", "message": "documents"},
                   task_step("last")])  # fmt: skip
    case = flow.case()
    ok(flow.client.post(f"/tasks/{case['id']}/first/complete", {"data": {"approved": True}}, format="json"))
    return flow, case["id"]


def test_the_send_message_form_completes_the_waiting_step(api, admin_user):
    flow, case_id = waiting_case(api, admin_user)
    client = signed_in(admin_user)
    page = client.get(f"/console/cases/{case_id}").content.decode()
    url = f"/console/cases/{case_id}/messages/documents"
    assert f'action="{url}"' in page and "Send message “documents”" in page and "{#" not in page

    bad = client.post(url, {"data": "{not json"}, follow=True)
    assert "the data is not valid JSON" in bad.content.decode()
    assert flow.statuses(case_id)["docs"] == "active"
    other = client.post(f"/console/cases/{case_id}/messages/other", {}, follow=True)
    assert "no step is waiting for “other”" in other.content.decode()

    sent = client.post(url, {"data": '{"pages": 3}'})
    assert sent.status_code == 302 and sent["Location"] == f"/console/cases/{case_id}"
    assert "Message “documents” sent." in client.get(sent["Location"]).content.decode()
    assert flow.statuses(case_id) == {"first": "completed", "docs": "completed", "last": "active"}
    assert CaseStep.objects.get(case_id=case_id, step_id="docs").result == {"pages": 3}
    again = client.post(url, {}, follow=True).content.decode()
    assert "no step is waiting for “documents”" in again and 'messages/documents"' not in again

    prefs = {"theme": "Light", "language": "de", "timezone": "Europe/Berlin", "itemsPerPage": "10"}
    assert client.post("/console/preferences", prefs).status_code == 302
    german = client.post(url, {}, follow=True).content.decode()
    assert "Nachricht nicht gesendet: Kein Schritt wartet auf „documents“." in german


def test_the_send_message_form_is_refused_without_permission_another_tenant_or_sign_in(
    api, admin_user, make_user, tenant, other_tenant, client
):
    flow, case_id = waiting_case(api, admin_user)
    url = f"/console/cases/{case_id}/messages/documents"
    reader = signed_in(make_user(tenant, permissions=["cases:read"]))
    assert 'messages/documents"' not in reader.get(f"/console/cases/{case_id}").content.decode()
    assert reader.post(url, {}).status_code == 403
    assert signed_in(make_user(other_tenant, roles=["admin"])).post(url, {}).status_code == 404
    anonymous = client.post(url, {})
    assert anonymous.status_code == 302 and "/console/login" in anonymous["Location"]
    assert flow.statuses(case_id)["docs"] == "active"
