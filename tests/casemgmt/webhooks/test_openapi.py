"""The OpenAPI document describes the inbound webhook routes with the fields they really answer."""

import pytest

from tests.casemgmt.webhooks.test_inbound import configure, deliver
from tests.casemgmt.workflows.conftest import Flow, ok

pytestmark = pytest.mark.django_db


def test_documented_fields_match_real_responses(api, admin_user):
    document = ok(api(None).get("/openapi.json"))
    components = document["components"]["schemas"]
    assert {"/admin/webhooks/inbound", "/admin/webhooks/inbound/{webhook_id}"} <= set(document["paths"])
    assert "/webhooks/{tenant_id}/{path}" in document["paths"]

    flow = Flow(api, admin_user)
    hook = configure(flow, secret="a-long-enough-secret")
    assert set(hook) == set(components["InboundWebhookOut"]["properties"])
    assert set(ok(flow.client.get("/admin/webhooks/inbound"))) == set(
        components["InboundWebhookPageOut"]["properties"]
    )
    accepted = deliver(hook, {"subject": "x"}, secret="a-long-enough-secret")
    assert set(accepted.json()) == set(components["DeliveryAcceptedOut"]["properties"])


def test_the_public_receivers_document_their_401(api):
    """Neither receiver has a bearer token, yet both refuse a bad signature (or key) with 401."""
    paths = ok(api(None).get("/openapi.json"))["paths"]
    receive = paths["/webhooks/{tenant_id}/{path}"]["post"]
    callback = paths["/webhooks/orchestrator/{tenant_id}"]["post"]
    for operation in (receive, callback):
        assert "401" in operation["responses"]
    headers = {p["name"] for p in receive["parameters"] if p["in"] == "header"}
    assert {"webhook-id", "webhook-timestamp", "webhook-signature", "X-Webhook-Timestamp"} <= headers
