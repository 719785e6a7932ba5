"""Slack Web API connector against a local server speaking the Web API."""

from __future__ import annotations

import json

import pytest

from casemgmt.connectors.base import ConnectorError
from casemgmt.connectors.registry import connector_get
from tests.casemgmt.connectors.builtins.conftest import SLACK_TOKEN

pytestmark = pytest.mark.django_db


def config(server):
    return {"token": SLACK_TOKEN, "apiUrl": server.api_url}


def test_send_message_posts_json_with_bearer_token(invoke, slack_server):
    result, context = invoke(
        "slack", "send_message", {"channel": "C0PUBLIC01", "text": "Case ACME-000001 needs review"},
        config(slack_server),
    )  # fmt: skip
    [request] = slack_server.requests
    assert (request.method, request.path) == ("POST", "/api/chat.postMessage")
    assert request.headers["authorization"] == f"Bearer {SLACK_TOKEN}"
    assert request.headers["content-type"] == "application/json; charset=utf-8"
    assert request.json == {"channel": "C0PUBLIC01", "text": "Case ACME-000001 needs review"}
    assert result.step_result() == {"ok": True, "channel": "C0PUBLIC01", "ts": "1700000000.000001"}
    assert result.body["message"]["text"] == "Case ACME-000001 needs review"
    # The token never reaches the invocation log.
    assert SLACK_TOKEN not in json.dumps(context.exchanges)


def test_thread_reply_and_blocks_are_sent(invoke, slack_server):
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "*Approved*"}}]
    invoke(
        "slack", "send_message", {"channel": "C0PUBLIC01", "blocks": blocks, "thread_ts": "1700000000.000009"},
        config(slack_server),
    )  # fmt: skip
    assert slack_server.requests[0].json == {
        "channel": "C0PUBLIC01", "blocks": blocks, "thread_ts": "1700000000.000009",
    }  # fmt: skip


def test_send_dm_opens_the_conversation_then_posts_to_it(invoke, slack_server):
    result, _ = invoke(
        "slack", "send_dm", {"user": "U0123ABCD", "text": "You have a new task"}, config(slack_server)
    )
    opened, posted = slack_server.requests
    assert opened.path == "/api/conversations.open" and opened.json == {"users": "U0123ABCD"}
    assert posted.path == "/api/chat.postMessage"
    assert posted.json == {"channel": "D0123ABCD", "text": "You have a new task"}
    assert result.step_result()["channel"] == "D0123ABCD"


def test_update_message_edits_the_posted_message(invoke, slack_server):
    first, _ = invoke(
        "slack", "send_message", {"channel": "C0PUBLIC01", "text": "Pending"}, config(slack_server)
    )
    ts = first.step_result()["ts"]
    result, _ = invoke(
        "slack",
        "update_message",
        {"channel": "C0PUBLIC01", "ts": ts, "text": "Approved"},
        config(slack_server),
    )
    update = slack_server.requests[-1]
    assert update.path == "/api/chat.update"
    assert update.json == {"channel": "C0PUBLIC01", "ts": ts, "text": "Approved"}
    assert slack_server.messages[("C0PUBLIC01", ts)] == "Approved"
    assert result.step_result() == {"ok": True, "channel": "C0PUBLIC01", "ts": ts}


@pytest.mark.parametrize(
    ("channel", "token", "code"),
    [("C0MISSING", SLACK_TOKEN, "channel_not_found"), ("C0PUBLIC01", "xoxb-wrong-token", "invalid_auth")],
)
def test_ok_false_errors_are_permanent_and_name_the_slack_code(invoke, slack_server, channel, token, code):
    with pytest.raises(ConnectorError) as failure:
        invoke(
            "slack",
            "send_message",
            {"channel": channel, "text": "x"},
            {**config(slack_server), "token": token},
        )
    error = failure.value
    assert error.transient is False
    assert code in error.message
    assert error.body == {"ok": False, "error": code}


def test_unknown_message_to_update_is_permanent(invoke, slack_server):
    with pytest.raises(ConnectorError) as failure:
        invoke(
            "slack",
            "update_message",
            {"channel": "C0PUBLIC01", "ts": "1.2", "text": "x"},
            config(slack_server),
        )
    assert "message_not_found" in failure.value.message and not failure.value.transient


def test_rate_limit_and_server_errors_are_transient(invoke, slack_server):
    slack_server.fail_next(429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "30"})
    with pytest.raises(ConnectorError) as limited:
        invoke("slack", "send_message", {"channel": "C0PUBLIC01", "text": "x"}, config(slack_server))
    assert limited.value.transient and limited.value.status_code == 429
    slack_server.fail_next(200, {"ok": False, "error": "internal_error"})
    with pytest.raises(ConnectorError) as internal:
        invoke("slack", "send_message", {"channel": "C0PUBLIC01", "text": "x"}, config(slack_server))
    assert internal.value.transient
    slack_server.fail_next(503, "Service Unavailable")
    with pytest.raises(ConnectorError) as unavailable:
        invoke("slack", "send_message", {"channel": "C0PUBLIC01", "text": "x"}, config(slack_server))
    assert unavailable.value.transient and unavailable.value.status_code == 503


def test_text_or_blocks_is_required():
    problems = connector_get("slack").check_inputs("send_message", {"channel": "C0PUBLIC01"})
    assert problems == [{"field": "text", "error": "text or blocks is required"}]
