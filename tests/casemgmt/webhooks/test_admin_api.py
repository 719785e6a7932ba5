"""The inbound webhook configuration routes: CRUD, audit and the permission matrix."""

from __future__ import annotations

import uuid

import pytest

from casemgmt.accounts.models import User
from casemgmt.audit.models import AuditEvent
from casemgmt.webhooks.models import InboundWebhook
from tests.casemgmt.webhooks.test_inbound import SECRET, configure, deliver
from tests.casemgmt.workflows.conftest import Flow, ok

pytestmark = pytest.mark.django_db

BASE = "/admin/webhooks/inbound"


@pytest.fixture
def flow(api, admin_user) -> Flow:
    return Flow(api, admin_user)


def test_crud_round_trip_with_secret_redacted_and_key_rotation(flow):
    hook = configure(flow, secret=SECRET)
    assert hook["url"].endswith(f"/webhooks/{flow.admin.tenant_id}/{hook['path']}")
    assert hook["keyPrefix"] == hook["key"][: len(hook["keyPrefix"])]
    shown = ok(flow.client.get(f"{BASE}/{hook['id']}"))
    assert "key" not in shown and shown["secret"] == "***"
    assert {k: v for k, v in hook.items() if k != "key"} == shown
    listed = ok(flow.client.get(BASE))
    assert listed["total"] == 1 and listed["data"] == [shown] and listed["next"] is None

    rotated = ok(flow.client.put(f"{BASE}/{hook['id']}", {"rotateKey": True, "secret": None}, format="json"))
    assert rotated["key"] != hook["key"] and rotated["secret"] is None
    assert deliver(hook, {"subject": "old key"}).status_code == 401
    assert deliver(rotated, {"subject": "new key, unsigned now"}).status_code == 202

    changed = ok(flow.client.put(f"{BASE}/{hook['id']}", {"mapping": {"/title": ""}}, format="json"))
    assert changed["mapping"] == {"/title": ""} and changed["path"] == hook["path"]

    actions = AuditEvent.objects.filter(resource=f"webhooks/inbound/{hook['id']}").order_by("sequence")
    assert [e.action for e in actions] == ["connector:configured"] * 3
    assert all(SECRET not in str(e.changes) and hook["key"] not in str(e.changes) for e in actions)

    assert flow.client.delete(f"{BASE}/{hook['id']}").status_code == 204
    assert flow.client.get(f"{BASE}/{hook['id']}").status_code == 404
    assert deliver(rotated, {"subject": "gone"}).status_code == 404


def test_invalid_configurations_are_400_or_409(flow):
    client = flow.client
    good = {"path": "orders", "caseTypeKey": flow.key}
    for bad, field in (
        ({"path": "../etc"}, "path"),
        ({"path": "a//b"}, "path"),
        ({"caseTypeKey": "no_such_type"}, "caseTypeKey"),
        ({"mapping": {"title": "/x"}}, "mapping.title"),
        ({"mapping": {"/title": 5}}, "mapping./title"),
        ({"mapping": ["/x"]}, "mapping"),
        ({"casePointer": "caseNumber"}, "casePointer"),
        ({"secret": "short"}, "secret"),
        ({"unknown": 1}, "unknown"),
        ({"isActive": "yes"}, "isActive"),
    ):
        response = client.post(BASE, {**good, **bad}, format="json")
        assert response.status_code == 400, (bad, response.content)
        assert response.json()["details"]["field"] == field
    assert client.post(BASE, {"path": "orders"}, format="json").status_code == 400
    ok(client.post(BASE, good, format="json"), 201)
    duplicate = client.post(BASE, good, format="json")
    assert duplicate.status_code == 409 and duplicate.json()["code"] == "already_exists"
    assert InboundWebhook.objects.filter(tenant_id=flow.admin.tenant_id).count() == 1
    assert client.get(f"{BASE}?limit=101").status_code == 400


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("get", "", None),
        ("post", "", {"path": "p2", "caseTypeKey": None}),
        ("get", "/{id}", None),
        ("put", "/{id}", {"isActive": False}),
        ("delete", "/{id}", None),
    ],
)
def test_permission_matrix(flow, api, make_user, tenant, other_tenant, method, suffix, body):
    hook = configure(flow)
    url = BASE + suffix.format(id=hook["id"])
    if body is not None and "caseTypeKey" in body:
        body = {**body, "caseTypeKey": flow.key}

    def call(user):
        return getattr(api(user), method)(url, body, format="json")

    assert call(None).status_code == 401
    lacking = make_user(tenant, permissions=["cases:read", "connectors:read", "admin:users"])
    assert call(lacking).status_code == 403
    outsider = make_user(other_tenant, permissions=["admin:tenant"])
    outsider_response = call(outsider)
    if suffix:  # another tenant's webhook does not exist for it
        assert outsider_response.status_code == 404
    else:  # the list and create act on the caller's own tenant: it never sees this one
        assert hook["id"] not in str(outsider_response.content)
    holder = make_user(tenant, permissions=["admin:tenant"])
    assert call(holder).status_code in (200, 201, 204)
    assert InboundWebhook.objects.filter(id=hook["id"], tenant=tenant).exists() == (method != "delete")


def test_path_names_may_repeat_across_tenants(flow, api, other_tenant):
    hook = configure(flow, path="shared/name")
    other_admin = User.objects.get(tenant=other_tenant, roles__name="admin")
    other = Flow(api, other_admin)
    theirs = configure(other, path="shared/name")
    assert theirs["url"] != hook["url"]
    assert deliver(theirs, {"subject": "theirs"}, key=hook["key"]).status_code == 401
    assert deliver(theirs, {"subject": "theirs"}).status_code == 202
    assert uuid.UUID(theirs["id"])


def test_list_is_newest_first_and_pages(flow):
    for path in ("a-older", "z-newer"):  # alphabetical order is the opposite of newest first
        configure(flow, path=path)
    listed = ok(flow.client.get(BASE))
    assert [w["path"] for w in listed["data"]] == ["z-newer", "a-older"]
    page = ok(flow.client.get(f"{BASE}?limit=1&offset=1"))
    assert [w["path"] for w in page["data"]] == ["a-older"] and page["total"] == 2 and page["next"] is None
    assert ok(flow.client.get(f"{BASE}?limit=1"))["next"].endswith("limit=1&offset=1")
