"""Email connector: real SMTP through Django's backend to a local aiosmtpd server with AUTH."""

from __future__ import annotations

import json

import pytest

from casemgmt.connectors.base import ConnectorError
from casemgmt.connectors.registry import connector_get
from tests.casemgmt.connectors.builtins.conftest import SMTP_PASSWORD, SMTP_USER
from tests.support.processes import free_port

pytestmark = pytest.mark.django_db


def config(server, **overrides):
    return {
        "host": "127.0.0.1", "port": server.port, "username": SMTP_USER, "password": SMTP_PASSWORD,
        "use_tls": False, "from": "Acme Cases <cases@acme.test>", **overrides,
    }  # fmt: skip


def test_send_delivers_one_message_with_html_and_the_idempotent_message_id(invoke, smtp_server):
    result, context = invoke(
        "email", "send",
        {"to": ["ada@example.test", "bob@example.test"], "cc": "carol@example.test", "subject": "Case ACME-000005",
         "body": "Your claim is approved.", "html": "<p>Your claim is <b>approved</b>.</p>"},
        config(smtp_server), idempotency_key="case-5:notify:0",
    )  # fmt: skip
    [(envelope_to, message)] = smtp_server.messages
    assert sorted(envelope_to) == ["ada@example.test", "bob@example.test", "carol@example.test"]
    assert message["From"] == "Acme Cases <cases@acme.test>"
    assert message["To"] == "ada@example.test, bob@example.test"
    assert message["Subject"] == "Case ACME-000005"
    assert message["Message-ID"] == "<case-5-notify-0@connectors.casemgmt>"
    assert message.get_body(("plain",)).get_content().strip() == "Your claim is approved."
    assert message.get_body(("html",)).get_content().strip() == "<p>Your claim is <b>approved</b>.</p>"
    assert result.status_code == 250 and result.step_result() == {"sent": 1}
    [exchange] = context.exchanges
    assert exchange["url"] == f"smtp://127.0.0.1:{smtp_server.port}" and exchange["statusCode"] == 250
    assert SMTP_PASSWORD not in json.dumps(context.exchanges)


def test_send_bulk_sends_each_recipient_a_copy_over_one_connection(invoke, smtp_server):
    recipients = ["a@example.test", "b@example.test", "c@example.test"]
    result, _ = invoke(
        "email", "send_bulk", {"recipients": recipients, "subject": "Maintenance", "body": "Tonight 22:00."},
        config(smtp_server), idempotency_key="bulk-1",
    )  # fmt: skip
    assert [to for to, _ in smtp_server.messages] == [[r] for r in recipients]
    assert [m["To"] for _, m in smtp_server.messages] == recipients
    assert [m["Message-ID"] for _, m in smtp_server.messages] == [
        f"<bulk-1.{i}@connectors.casemgmt>" for i in range(3)
    ]
    assert result.step_result() == {"sent": 3}
    assert result.body["recipients"] == recipients


def test_wrong_password_is_a_permanent_smtp_error(invoke, smtp_server):
    with pytest.raises(ConnectorError) as failure:
        invoke("email", "send", {"to": "a@example.test", "subject": "s", "body": "b"},
               config(smtp_server, password="wrong"))  # fmt: skip
    assert failure.value.code == "smtp_error" and failure.value.status_code == 535
    assert not failure.value.transient
    assert smtp_server.messages == []


def test_unreachable_server_is_transient(invoke):
    with pytest.raises(ConnectorError) as failure:
        invoke("email", "send", {"to": "a@example.test", "subject": "s", "body": "b"},
               {"host": "127.0.0.1", "port": free_port(), "use_tls": False, "from": "x@acme.test"})  # fmt: skip
    assert failure.value.code == "network_error" and failure.value.transient


def test_an_inner_smtp_host_is_refused_unless_allowed(invoke, smtp_server, settings):
    settings.CONNECTOR_ALLOWED_HOSTS = []
    with pytest.raises(ConnectorError) as failure:
        invoke("email", "send", {"to": "a@example.test", "subject": "s", "body": "b"}, config(smtp_server))
    assert failure.value.code == "unsafe_target" and "loopback" in failure.value.message
    assert smtp_server.messages == []


def test_addresses_are_checked():
    email = connector_get("email")
    assert email.check_inputs("send", {"to": "not-an-address", "subject": "s", "body": "b"}) == [
        {"field": "to", "error": "not an email address: not-an-address"}
    ]
    assert email.check_inputs("send_bulk", {"recipients": [], "subject": "s", "body": "b"}) == [
        {"field": "recipients", "error": "at least one email address is required"}
    ]
