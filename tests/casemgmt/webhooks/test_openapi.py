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
