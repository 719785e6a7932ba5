"""Inbound webhooks through the HTTP API: configuration by an admin, deliveries by a sender."""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid

import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command
from django.test import Client

from casemgmt.audit.models import AuditEvent
from casemgmt.cases.models import Case
from casemgmt.webhooks.models import InboundDelivery, InboundWebhook
from tests.casemgmt.workflows.conftest import Flow, ok, task_step

pytestmark = pytest.mark.django_db

SECRET = "a-shared-secret-of-some-length"


@pytest.fixture
def flow(api, admin_user) -> Flow:
    flow = Flow(api, admin_user)
    flow.workflow([task_step("triage"), task_step("decide")])
    return flow


def configure(flow: Flow, **extra) -> dict:
    body = {
        "path": f"intake/{uuid.uuid4().hex[:6]}",
        "caseTypeKey": flow.key,
        "mapping": {"/title": "/subject", "/amount": "/order/total", "/kind": "/kind"},
        "casePointer": "/caseNumber",
        **extra,
    }
    return ok(flow.client.post("/admin/webhooks/inbound", body, format="json"), 201)


def deliver(hook: dict, payload, *, key=None, secret=None, delivery=None, signature=None, **headers):
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    if secret is not None:
        signature = "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()
    if signature is not None:
        headers["HTTP_X_WEBHOOK_SIGNATURE"] = signature
    if delivery is not None:
        headers["HTTP_X_WEBHOOK_DELIVERY"] = delivery
    path = hook["url"].split("/webhooks/", 1)[1]
    return Client().post(
        f"/webhooks/{path}",
        raw,
        content_type=headers.pop("content_type", "application/json"),
        HTTP_X_WEBHOOK_KEY=key if key is not None else hook["key"],
        **headers,
    )


def test_a_delivery_creates_a_case_whose_workflow_starts(flow):
    hook = configure(flow)
    assert hook["key"].startswith("whk_") and hook["secret"] is None
    response = deliver(hook, {"subject": "Flooded cellar", "order": {"total": 420}, "kind": "water"})
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["status"] == "created" and body["caseNumber"]
    case = ok(flow.client.get(f"/cases/{body['caseId']}"))
    assert case["data"] == {"title": "Flooded cellar", "amount": 420, "kind": "water"}
    assert case["createdBy"] == hook["principalId"]
    assert flow.statuses(case["id"]) == {"triage": "active", "decide": "pending"}
    created = AuditEvent.objects.get(tenant_id=flow.admin.tenant_id, action="case:created")
    assert created.actor == hook["principalId"] and created.resource == f"cases/{case['id']}"


def test_a_delivery_naming_a_case_merges_into_it(flow):
    hook = configure(flow)
    first = deliver(hook, {"subject": "Claim", "order": {"total": 10}}).json()
    response = deliver(hook, {"caseNumber": first["caseNumber"], "order": {"total": 99}, "kind": "fire"})
    assert response.status_code == 202, response.content
    assert response.json() == {**first, "status": "merged"}
    case = ok(flow.client.get(f"/cases/{first['caseId']}"))
    assert case["data"] == {"title": "Claim", "amount": 99, "kind": "fire"} and case["version"] == 2
    assert Case.objects.filter(tenant_id=flow.admin.tenant_id).count() == 1
    # a case id names the case too; an unknown reference is a 404 and nothing changes
    by_id = deliver(hook, {"caseNumber": first["caseId"], "kind": "storm"})
    assert by_id.status_code == 202 and by_id.json()["status"] == "merged"
    unknown = deliver(hook, {"caseNumber": "NOPE-000001", "kind": "x"})
    assert unknown.status_code == 404 and unknown.json()["code"] == "not_found"
    assert ok(flow.client.get(f"/cases/{first['caseId']}"))["data"]["kind"] == "storm"


def test_a_replayed_delivery_id_is_ignored(flow):
    hook = configure(flow)
    payload = {"subject": "Once", "order": {"total": 1}}
    first = deliver(hook, payload, delivery="d-1")
    again = deliver(hook, payload, delivery="d-1")
    assert first.status_code == again.status_code == 202
    assert again.json() == {**first.json(), "status": "duplicate"}
    assert Case.objects.filter(tenant_id=flow.admin.tenant_id).count() == 1
    other = deliver(hook, payload, HTTP_X_DELIVERY_ID="d-2")
    assert other.json()["status"] == "created"
    assert Case.objects.filter(tenant_id=flow.admin.tenant_id).count() == 2


def test_signed_deliveries(flow):
    hook = configure(flow, secret=SECRET)
    assert hook["secret"] == "***"
    events_before = AuditEvent.objects.count()
    for bad in (
        {"signature": None},
        {"signature": "sha256=" + "0" * 64},
        {"secret": "some-other-secret-value"},
        {"signature": "md5=abc"},
    ):
        response = deliver(hook, {"subject": "Forged"}, delivery="x", **bad)
        assert response.status_code == 401, response.content
        assert response.json()["code"] == "not_authenticated"
    assert not Case.objects.filter(tenant_id=flow.admin.tenant_id).exists()
    assert not InboundDelivery.objects.exists() and AuditEvent.objects.count() == events_before
    signed = deliver(hook, {"subject": "Genuine"}, secret=SECRET, delivery="x")
    assert signed.status_code == 202 and signed.json()["status"] == "created"
    # the secret is stored encrypted, never in clear
    stored = InboundWebhook.objects.get(id=hook["id"]).secret_encrypted
    assert stored and SECRET not in stored


def test_key_path_and_tenant_are_checked(flow, api, other_tenant):
    hook = configure(flow)
    assert deliver(hook, {"subject": "x"}, key="whk_wrong").status_code == 401
    assert deliver(hook, {"subject": "x"}, key="").status_code == 401
    # the key may come as ?key= for senders that cannot set headers
    path = hook["url"].split("/webhooks/", 1)[1]
    by_query = Client().post(f"/webhooks/{path}?key={hook['key']}", b'{"subject": "q"}', "application/json")
    assert by_query.status_code == 202, by_query.content

    unknown = Client().post(f"/webhooks/{flow.admin.tenant_id}/no/such/path", b"{}", "application/json")
    assert unknown.status_code == 404 and unknown.json()["code"] == "not_found"
    # the same path under another tenant's id is not this webhook
    foreign = Client().post(
        f"/webhooks/{other_tenant.id}/{hook['path']}",
        b"{}",
        "application/json",
        HTTP_X_WEBHOOK_KEY=hook["key"],
    )
    assert foreign.status_code == 404
    # switched off: gone
    ok(flow.client.put(f"/admin/webhooks/inbound/{hook['id']}", {"isActive": False}, format="json"))
    assert deliver(hook, {"subject": "x"}).status_code == 404


def test_bad_bodies_are_4xx_and_store_nothing(flow, settings):
    hook = configure(flow, mapping={})
    cases = Case.objects.filter(tenant_id=flow.admin.tenant_id)
    assert deliver(hook, b"{not json").status_code == 400
    assert deliver(hook, [1, 2]).json()["code"] == "validation_error"  # not an object
    assert deliver(hook, {"amount": "lots"}).status_code == 400  # fails the case type's schema
    assert deliver(hook, b"<x/>", content_type="application/xml").status_code == 415
    assert deliver(hook, "\ud800".encode("utf-8", "surrogatepass")).status_code == 400
    nul = deliver(hook, b"title=a%00b", content_type="application/x-www-form-urlencoded")
    assert nul.status_code == 400, nul.content
    settings.WEBHOOK_MAX_BODY_BYTES = 50
    too_big = deliver(hook, {"title": "x" * 100})
    assert too_big.status_code == 413 and too_big.json()["code"] == "payload_too_large"
    assert not cases.exists() and not InboundDelivery.objects.exists()
    settings.WEBHOOK_MAX_BODY_BYTES = 1024
    form = deliver(hook, b"title=From+a+form&kind=web", content_type="application/x-www-form-urlencoded")
    assert form.status_code == 202, form.content
    assert cases.get().data == {"title": "From a form", "kind": "web"}


def test_a_failed_delivery_can_be_retried_with_the_same_id(flow):
    hook = configure(flow, mapping={})
    assert deliver(hook, {"amount": "lots"}, delivery="r-1").status_code == 400
    retried = deliver(hook, {"amount": 3}, delivery="r-1")
    assert retried.status_code == 202 and retried.json()["status"] == "created"


def test_merge_into_a_closed_case_is_a_conflict(flow):
    hook = configure(flow)
    created = deliver(hook, {"subject": "Done"}).json()
    ok(flow.client.post(f"/cases/{created['caseId']}/close", {}, format="json"))
    response = deliver(hook, {"caseNumber": created["caseNumber"], "kind": "late"})
    assert response.status_code == 409 and response.json()["code"] == "invalid_state"


def test_secret_survives_key_rotation_and_a_lost_key_is_503(flow, settings):
    hook = configure(flow, secret=SECRET)
    old, new = list(settings.FIELD_ENCRYPTION_KEYS), Fernet.generate_key().decode()
    settings.FIELD_ENCRYPTION_KEYS = [new, *old]
    assert deliver(hook, {"subject": "during"}, secret=SECRET).status_code == 202
    call_command("rotate_webhook_secrets")
    settings.FIELD_ENCRYPTION_KEYS = [new]  # the old key dropped after rotation
    assert deliver(hook, {"subject": "after"}, secret=SECRET).status_code == 202
    assert deliver(hook, {"subject": "forged"}, secret="wrong-secret-value").status_code == 401
    settings.FIELD_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]  # a key lost too early
    lost = deliver(hook, {"subject": "lost"}, secret=SECRET)
    assert lost.status_code == 503 and lost.json()["code"] == "not_configured"
