"""Teams incoming-webhook connector against a local server speaking the webhook protocol."""

from __future__ import annotations

import json

import pytest

from casemgmt.connectors.base import ConnectorError

pytestmark = pytest.mark.django_db


def test_send_message_posts_a_message_card(invoke, teams_server):
    result, context = invoke(
        "teams", "send_message", {"text": "**ACME-000002** escalated", "title": "Escalation", "themeColor": "D70000"},
        {"webhookUrl": teams_server.webhook_url},
    )  # fmt: skip
    [request] = teams_server.requests
    assert request.method == "POST" and request.path == teams_server.PATH
    assert request.headers["content-type"] == "application/json"
    assert request.json == {
        "@type": "MessageCard",
        "@context": "https://schema.org/extensions",
        "summary": "Escalation",
        "text": "**ACME-000002** escalated",
        "title": "Escalation",
        "themeColor": "D70000",
    }
    assert result.status_code == 200 and result.body == "1"
    # The webhook URL is the credential: it is not in the invocation log.
    assert teams_server.PATH not in json.dumps(context.exchanges)


def test_send_adaptive_card_wraps_the_card_as_the_message_attachment(invoke, teams_server):
    card = {"body": [{"type": "TextBlock", "text": "Claim approved", "weight": "Bolder"}], "version": "1.5"}
    invoke("teams", "send_adaptive_card", {"card": card}, {"webhookUrl": teams_server.webhook_url})
    assert teams_server.requests[0].json == {
        "type": "message",
        "attachments": [
            {
                "contentType": "application/vnd.microsoft.card.adaptive",
                "contentUrl": None,
                "content": {
                    "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                    "type": "AdaptiveCard",
                    "version": "1.5",
                    "body": card["body"],
                },
            }
        ],
    }


def test_bad_payload_is_permanent(invoke, teams_server):
    with pytest.raises(ConnectorError) as failure:
        invoke(
            "teams",
            "send_adaptive_card",
            {"card": {"type": "NotACard"}},
            {"webhookUrl": teams_server.webhook_url},
        )
    assert failure.value.status_code == 400 and not failure.value.transient


def test_throttling_is_transient_whether_a_status_or_a_200_naming_it(invoke, teams_server):
    teams_server.fail_next(429, "Too Many Requests")
    with pytest.raises(ConnectorError) as status:
        invoke("teams", "send_message", {"text": "x"}, {"webhookUrl": teams_server.webhook_url})
    assert status.value.transient
    teams_server.fail_next(
        200, "Microsoft Teams endpoint returned HTTP error 429 with ContextId tcid=0,cv=Ab1.0"
    )
    with pytest.raises(ConnectorError) as embedded:
        invoke("teams", "send_message", {"text": "x"}, {"webhookUrl": teams_server.webhook_url})
    assert embedded.value.transient and embedded.value.status_code == 429


def test_unknown_webhook_is_permanent(invoke, teams_server):
    with pytest.raises(ConnectorError) as failure:
        invoke(
            "teams", "send_message", {"text": "x"}, {"webhookUrl": teams_server.base_url + "/webhookb2/gone"}
        )
    assert failure.value.status_code == 404 and not failure.value.transient
