"""Each protocol connector through `POST /connectors/{key}/actions/{action}/test` (a live call,
not a dry run) against its local protocol server: the tenant configuration stored through the API,
inputs with template expressions, the exact request that reached the server, the answer shown,
error mapping, and no secret in any response, invocation log or log line (at the service's
default INFO level)."""

from __future__ import annotations

import base64
import json
import logging

import pytest

from casemgmt.connectors.models import Invocation
from tests.casemgmt.connectors.builtins.conftest import (
    CHAT_TOKEN,
    JIRA_EMAIL,
    JIRA_TOKEN,
    SLACK_TOKEN,
    SMTP_PASSWORD,
    SMTP_USER,
)  # fmt: skip

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("loopback_allowed")]
CONTEXT = {"case_number": "CLM-000042", "case_data": {"applicant": {"name": "Ada"}, "amount": 1500}}


@pytest.fixture
def admin_api(api, admin_user):
    return api(admin_user)


def configure(client, key, config):
    response = client.put(f"/connectors/{key}/config", {"config": config}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def live(client, key, action, inputs, context=CONTEXT):
    body = {"config": inputs, "context": context, "dryRun": False}
    response = client.post(f"/connectors/{key}/actions/{action}/test", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def assert_secret_hidden(secret, *texts):
    for text in texts:
        assert secret not in (text if isinstance(text, str) else json.dumps(text))
    rows = Invocation.objects.values("url", "request_headers", "response_excerpt", "error")
    assert secret not in json.dumps(list(rows), default=str)


def test_slack_send_message(admin_api, slack_server, caplog):
    caplog.set_level(logging.INFO)
    shown = configure(admin_api, "slack", {"token": SLACK_TOKEN, "apiUrl": slack_server.api_url})
    assert shown["config"]["token"] == "***"
    out = live(admin_api, "slack", "send_message",
               {"channel": "C0PUBLIC01", "text": "{{case_number}}: {{case_data.applicant.name}} asks {{case_data.amount}}"})  # fmt: skip
    assert out["success"] is True and out["error"] is None
    assert out["result"]["statusCode"] == 200 and out["result"]["body"]["ok"] is True
    [request] = slack_server.requests
    assert request.path == "/api/chat.postMessage"
    assert request.headers["authorization"] == f"Bearer {SLACK_TOKEN}"
    assert request.json == {"channel": "C0PUBLIC01", "text": "CLM-000042: Ada asks 1500"}
    assert_secret_hidden(SLACK_TOKEN, out, shown, caplog.text)


def test_slack_error_codes_are_reported_not_raised(admin_api, slack_server):
    configure(admin_api, "slack", {"token": SLACK_TOKEN, "apiUrl": slack_server.api_url})
    out = live(admin_api, "slack", "send_message", {"channel": "C0GONE", "text": "x"})
    assert out["success"] is False
    assert out["error"] == {
        "code": "remote_error",
        "message": "slack: chat.postMessage failed: channel_not_found",
    }
    assert out["result"] == {"statusCode": 200, "body": {"ok": False, "error": "channel_not_found"}}


def test_slack_send_dm_and_update(admin_api, slack_server):
    configure(admin_api, "slack", {"token": SLACK_TOKEN, "apiUrl": slack_server.api_url})
    sent = live(admin_api, "slack", "send_dm", {"user": "U0123ABCD", "text": "Task for {{case_number}}"})
    ts = sent["result"]["body"]["ts"]
    assert [r.path for r in slack_server.requests] == ["/api/conversations.open", "/api/chat.postMessage"]
    updated = live(admin_api, "slack", "update_message", {"channel": "D0123ABCD", "ts": ts, "text": "Done"})
    assert updated["success"] is True
    assert slack_server.requests[-1].json == {"channel": "D0123ABCD", "ts": ts, "text": "Done"}


def test_teams_message_and_adaptive_card(admin_api, teams_server, caplog):
    caplog.set_level(logging.INFO)
    configure(admin_api, "teams", {"webhookUrl": teams_server.webhook_url})
    out = live(
        admin_api, "teams", "send_message", {"text": "Case {{case_number}} escalated", "title": "Escalation"}
    )
    assert out == {"success": True, "result": {"statusCode": 200, "body": "1"}, "error": None}
    assert teams_server.requests[0].json["text"] == "Case CLM-000042 escalated"
    card = {"body": [{"type": "TextBlock", "text": "Amount {{case_data.amount}}"}]}
    out = live(admin_api, "teams", "send_adaptive_card", {"card": card})
    assert out["success"] is True
    sent = teams_server.requests[1].json
    assert sent["type"] == "message"
    assert sent["attachments"][0]["contentType"] == "application/vnd.microsoft.card.adaptive"
    assert sent["attachments"][0]["content"]["body"] == [{"type": "TextBlock", "text": "Amount 1500"}]
    assert_secret_hidden(teams_server.PATH, out, caplog.text)


def test_google_chat_message(admin_api, chat_server, caplog):
    caplog.set_level(logging.INFO)
    configure(admin_api, "google_chat", {"webhookUrl": chat_server.webhook_url})
    out = live(
        admin_api,
        "google_chat",
        "send_message",
        {"text": "{{case_number}} opened", "threadKey": "{{case_number}}"},
    )
    assert out["success"] is True
    assert out["result"]["body"]["thread"]["name"] == f"spaces/{chat_server.SPACE}/threads/CLM-000042"
    [request] = chat_server.requests
    assert request.json == {"text": "CLM-000042 opened"} and request.query["threadKey"] == ["CLM-000042"]
    assert request.query["requestId"][0].startswith("test-")
    assert_secret_hidden(CHAT_TOKEN, out, caplog.text)


def test_jira_create_comment_transition(admin_api, jira_server, caplog):
    caplog.set_level(logging.INFO)
    shown = configure(
        admin_api, "jira", {"baseUrl": jira_server.base_url, "email": JIRA_EMAIL, "apiToken": JIRA_TOKEN}
    )
    assert shown["config"]["apiToken"] == "***" and shown["config"]["email"] == JIRA_EMAIL
    created = live(admin_api, "jira", "create_issue",
                   {"project": "OPS", "summary": "Review {{case_number}}", "description": "Amount {{case_data.amount}}"})  # fmt: skip
    assert created["success"] is True and created["result"]["statusCode"] == 201
    key = created["result"]["body"]["key"]
    fields = jira_server.requests[0].json["fields"]
    assert fields["summary"] == "Review CLM-000042" and fields["issuetype"] == {"name": "Task"}
    assert fields["description"]["content"][0]["content"] == [{"type": "text", "text": "Amount 1500"}]
    auth = "Basic " + base64.b64encode(f"{JIRA_EMAIL}:{JIRA_TOKEN}".encode()).decode()
    assert jira_server.requests[0].headers["authorization"] == auth
    commented = live(
        admin_api, "jira", "add_comment", {"issueKey": key, "body": "Checked by {{case_data.applicant.name}}"}
    )
    assert commented["result"]["statusCode"] == 201
    moved = live(admin_api, "jira", "transition_issue", {"issueKey": key, "transition": "In Progress"})
    assert moved["success"] is True and moved["result"]["statusCode"] == 204
    assert jira_server.issues[key]["status"] == "In Progress"
    updated = live(admin_api, "jira", "update_issue", {"issueKey": key, "labels": ["{{case_number}}"]})
    assert updated["success"] is True and jira_server.requests[-1].json == {
        "fields": {"labels": ["CLM-000042"]}
    }
    missing = live(admin_api, "jira", "add_comment", {"issueKey": "OPS-404", "body": "x"})
    assert missing["success"] is False and missing["result"]["statusCode"] == 404
    assert missing["error"]["code"] == "http_error" and "does not exist" in missing["error"]["message"]
    assert_secret_hidden(JIRA_TOKEN, created, commented, moved, missing, shown, caplog.text)


def test_email_send_and_send_bulk(admin_api, smtp_server, caplog):
    caplog.set_level(logging.INFO)
    configure(admin_api, "email", {
        "host": "127.0.0.1", "port": smtp_server.port, "username": SMTP_USER, "password": SMTP_PASSWORD,
        "use_tls": False, "from": "cases@acme.test",
    })  # fmt: skip
    out = live(admin_api, "email", "send",
               {"to": "ada@example.test", "subject": "{{case_number}}", "body": "Dear {{case_data.applicant.name}}"})  # fmt: skip
    assert out == {
        "success": True,
        "result": {"statusCode": 250, "body": {"sent": 1, "recipients": ["ada@example.test"]}},
        "error": None,
    }
    [(to, message)] = smtp_server.messages
    assert to == ["ada@example.test"] and message["Subject"] == "CLM-000042"
    assert message.get_content().strip() == "Dear Ada"
    bulk = live(admin_api, "email", "send_bulk",
                {"recipients": ["a@example.test", "b@example.test"], "subject": "Notice", "body": "Hello"})  # fmt: skip
    assert bulk["result"]["body"]["sent"] == 2
    assert [to for to, _ in smtp_server.messages[1:]] == [["a@example.test"], ["b@example.test"]]
    logged = Invocation.objects.filter(connector="email").order_by("id")
    assert [(r.action, r.method, r.url, r.status_code, r.success) for r in logged] == [
        ("send", "SMTP", f"smtp://127.0.0.1:{smtp_server.port}", 250, True),
        ("send_bulk", "SMTP", f"smtp://127.0.0.1:{smtp_server.port}", 250, True),
    ]
    assert_secret_hidden(SMTP_PASSWORD, out, bulk, caplog.text)


def test_email_bad_address_is_a_400(admin_api, smtp_server):
    configure(
        admin_api,
        "email",
        {"host": "127.0.0.1", "port": smtp_server.port, "use_tls": False, "from": "c@acme.test"},
    )
    response = admin_api.post(
        "/connectors/email/actions/send/test",
        {"config": {"to": "not-an-address", "subject": "s", "body": "b"}, "dryRun": False}, format="json",
    )  # fmt: skip
    assert response.status_code == 400
    assert smtp_server.messages == []


def test_pdf_test_call_renders_without_saving(admin_api):
    out = live(admin_api, "pdf", "generate_pdf", {"html": "<h1>{{case_number}}</h1>", "filename": "preview"})
    assert out["success"] is True
    assert out["result"]["body"]["filename"] == "preview.pdf" and out["result"]["body"]["saved"] is False


def test_the_listing_shows_each_protocol_connector_and_its_actions(admin_api):
    listed = {c["key"]: c for c in admin_api.get("/connectors").json()}
    expected = {
        "email": ["send", "send_bulk"],
        "slack": ["send_message", "send_dm", "update_message"],
        "teams": ["send_message", "send_adaptive_card"],
        "google_chat": ["send_message"],
        "jira": ["create_issue", "update_issue", "add_comment", "transition_issue"],
        "pdf": ["generate_pdf"],
    }
    for key, actions in expected.items():
        assert [a["name"] for a in listed[key]["actions"]] == actions
    assert listed["pdf"]["requiresAuth"] is False and listed["jira"]["requiresAuth"] is True
    assert listed["slack"]["actions"][0]["inputs"]["channel"] == {"type": "string", "required": True}


@pytest.mark.parametrize(
    ("key", "config", "field"),
    [
        (
            "jira",
            {"baseUrl": "acme.atlassian.net", "email": "r@acme.test", "apiToken": "t"},
            "config.baseUrl",
        ),
        (
            "jira",
            {"baseUrl": "https://acme.atlassian.net", "email": "robot", "apiToken": "t"},
            "config.email",
        ),
        ("slack", {"token": "xoxb-1", "apiUrl": "ftp://slack.test/api"}, "config.apiUrl"),
        ("teams", {"webhookUrl": "not a url"}, "config.webhookUrl"),
        ("google_chat", {"webhookUrl": "chat.googleapis.com/v1/spaces/x"}, "config.webhookUrl"),
        ("email", {"host": "smtp.acme.test", "from": "nobody"}, "config.from"),
        ("email", {"host": "smtp.acme.test", "from": "c@acme.test", "port": 70000}, "config.port"),
    ],
)
def test_a_configuration_that_cannot_work_is_a_400(admin_api, key, config, field):
    response = admin_api.put(f"/connectors/{key}/config", {"config": config}, format="json")
    assert response.status_code == 400, response.content
    assert field in [e["field"] for e in response.json()["details"]["errors"]]
    assert admin_api.get(f"/connectors/{key}/config").json().get("config") in ({}, None)
