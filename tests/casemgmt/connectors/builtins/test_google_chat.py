"""Google Chat incoming-webhook connector against a local server speaking the webhook protocol."""

from __future__ import annotations

import json

import pytest

from casemgmt.connectors.base import ConnectorError
from tests.casemgmt.connectors.builtins.conftest import CHAT_TOKEN

pytestmark = pytest.mark.django_db


def test_send_message_posts_text_with_the_request_id(invoke, chat_server):
    result, context = invoke(
        "google_chat", "send_message", {"text": "New case *ACME-000003*"}, {"webhookUrl": chat_server.webhook_url},
        idempotency_key="case-1:notify:0",
    )  # fmt: skip
    [request] = chat_server.requests
    assert request.path == f"/v1/spaces/{chat_server.SPACE}/messages"
    assert request.query["token"] == [CHAT_TOKEN] and request.query["requestId"] == ["case-1-notify-0"]
    assert request.headers["content-type"] == "application/json; charset=UTF-8"
    assert request.json == {"text": "New case *ACME-000003*"}
    assert result.step_result() == {
        "ok": True,
        "name": f"spaces/{chat_server.SPACE}/messages/msg1.msg1",
        "thread": f"spaces/{chat_server.SPACE}/threads/thread1",
    }
    assert CHAT_TOKEN not in json.dumps(context.exchanges)


def test_thread_key_replies_in_that_thread(invoke, chat_server):
    result, _ = invoke(
        "google_chat", "send_message", {"text": "update", "threadKey": "case-ACME-000003"},
        {"webhookUrl": chat_server.webhook_url},
    )  # fmt: skip
    query = chat_server.requests[0].query
    assert query["threadKey"] == ["case-ACME-000003"]
    assert query["messageReplyOption"] == ["REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD"]
    assert result.step_result()["thread"].endswith("/threads/case-ACME-000003")


def test_a_redelivered_step_does_not_post_a_second_message(invoke, chat_server):
    config = {"webhookUrl": chat_server.webhook_url}
    first, _ = invoke("google_chat", "send_message", {"text": "once"}, config, idempotency_key="k-1")
    again, _ = invoke("google_chat", "send_message", {"text": "once"}, config, idempotency_key="k-1")
    assert first.step_result()["name"] == again.step_result()["name"]
    assert len(chat_server.by_request_id) == 1


def test_bad_credentials_are_permanent_and_outages_transient(invoke, chat_server):
    wrong = chat_server.webhook_url.replace(CHAT_TOKEN, "not-the-token")
    with pytest.raises(ConnectorError) as denied:
        invoke("google_chat", "send_message", {"text": "x"}, {"webhookUrl": wrong})
    assert denied.value.status_code == 401 and not denied.value.transient
    assert denied.value.body["error"]["status"] == "UNAUTHENTICATED"
    chat_server.fail_next(
        503, {"error": {"code": 503, "message": "The service is unavailable.", "status": "UNAVAILABLE"}}
    )
    with pytest.raises(ConnectorError) as outage:
        invoke("google_chat", "send_message", {"text": "x"}, {"webhookUrl": chat_server.webhook_url})
    assert outage.value.transient
