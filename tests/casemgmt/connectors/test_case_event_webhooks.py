"""Outbound webhooks after case events: written with the case change, signed, only the events the
tenant subscribed to."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from casemgmt.connectors.delivery import delivery_send
from casemgmt.connectors.models import Delivery
from tests.casemgmt.workflows.conftest import Flow, ok

pytestmark = pytest.mark.django_db
SECRET = "events-secret-99"


@pytest.fixture
def flow(api, admin_user, settings):
    settings.CONNECTOR_ALLOWED_HOSTS = ["127.0.0.1"]
    return Flow(api, admin_user)


def test_subscribed_case_events_are_sent_signed(flow, receiver, django_capture_on_commit_callbacks):
    config = {
        "webhookUrl": f"{receiver.url}/events",
        "secret": SECRET,
        "events": ["case:created", "case:closed"],
    }
    ok(flow.client.put("/connectors/webhook/config", {"config": config}, format="json"))
    with django_capture_on_commit_callbacks(execute=False):
        case = flow.case({"amount": 5})
        ok(
            flow.client.patch(
                f"/cases/{case['id']}/data", {"data": {"amount": 6}, "version": 1}, format="json"
            )
        )
        ok(flow.client.post(f"/cases/{case['id']}/close", {"reason": "done"}, format="json"))
    rows = list(Delivery.objects.filter(case_id=case["id"]).order_by("created_at"))
    assert [r.inputs["envelope"]["event"] for r in rows] == ["case:created", "case:closed"]
    for row in rows:
        delivery_send(delivery_id=str(row.pk))
    created, closed = receiver.received("/events")
    for got in (created, closed):
        expected = "sha256=" + hmac.new(SECRET.encode(), got.body, hashlib.sha256).hexdigest()
        assert got.headers["X-Webhook-Signature"] == expected
    assert created.json()["caseData"] == {"amount": 5} and created.json()["caseId"] == case["id"]
    assert closed.json()["caseData"] == {"amount": 6} and closed.json()["event"] == "case:closed"


def test_no_subscription_no_delivery(flow):
    ok(
        flow.client.put(
            "/connectors/webhook/config", {"config": {"webhookUrl": "https://x.example"}}, format="json"
        )
    )
    case = flow.case()
    assert not Delivery.objects.filter(case_id=case["id"]).exists()


def test_events_are_checked(flow):
    bad = flow.client.put(
        "/connectors/webhook/config",
        {"config": {"webhookUrl": "https://x.example", "events": ["case:exploded"]}},
        format="json",
    )
    assert bad.status_code == 400 and bad.json()["details"]["field"] == "config.events"
    no_url = flow.client.put(
        "/connectors/webhook/config", {"config": {"events": ["case:created"]}}, format="json"
    )
    assert no_url.status_code == 400 and no_url.json()["details"]["field"] == "config.webhookUrl"
