"""Fixtures for the protocol connectors: the local protocol servers, reachable because 127.0.0.1
is allow-listed for the test, and a direct invocation through the real guarded HTTP client."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from casemgmt.connectors.base import InvocationContext, Result
from casemgmt.connectors.http import GuardedHttp
from casemgmt.connectors.registry import connector_get
from tests.support.protocols import GoogleChatServer, JiraServer, SlackServer, SmtpSink, TeamsServer

SLACK_TOKEN = "xoxb-1111-2222-s3cr3tSlackBotToken"
JIRA_EMAIL = "robot@acme.test"
JIRA_TOKEN = "ATATT3xFfGF0-s3cr3tJiraApiToken"
CHAT_TOKEN = "s3cr3tChatWebhookToken-abc"
SMTP_USER, SMTP_PASSWORD = "mailer", "s3cr3t-smtp-password"


@pytest.fixture
def loopback_allowed(settings) -> None:
    settings.CONNECTOR_ALLOWED_HOSTS = ["127.0.0.1"]


@pytest.fixture
def slack_server() -> Iterator[SlackServer]:
    server = SlackServer(token=SLACK_TOKEN).start()
    yield server
    server.stop()


@pytest.fixture
def teams_server() -> Iterator[TeamsServer]:
    server = TeamsServer().start()
    yield server
    server.stop()


@pytest.fixture
def chat_server() -> Iterator[GoogleChatServer]:
    server = GoogleChatServer(token=CHAT_TOKEN).start()
    yield server
    server.stop()


@pytest.fixture
def jira_server() -> Iterator[JiraServer]:
    server = JiraServer(email=JIRA_EMAIL, api_token=JIRA_TOKEN).start()
    yield server
    server.stop()


@pytest.fixture
def smtp_server() -> Iterator[SmtpSink]:
    server = SmtpSink(username=SMTP_USER, password=SMTP_PASSWORD).start()
    yield server
    server.stop()


@pytest.fixture
def invoke(loopback_allowed) -> Callable[..., tuple[Result, InvocationContext]]:
    """Calls one connector action the way the framework does (validated inputs with defaults,
    decrypted config, a guarded HTTP client), for protocol-level assertions."""

    def call(
        key: str, action: str, inputs: dict[str, Any], config: dict[str, Any], **context: Any
    ) -> tuple[Result, InvocationContext]:
        connector = connector_get(key)
        assert connector is not None
        declared = connector.actions[action].inputs
        ready = {name: spec.default for name, spec in declared.items() if spec.default is not None}
        ready.update(inputs)
        assert connector.check_inputs(action, ready) == []
        secrets = tuple(str(v) for k, v in config.items() if k in connector.all_secret_keys())
        invocation = InvocationContext(
            tenant_id=context.pop("tenant_id", uuid.uuid4()),
            connector=key,
            action=action,
            idempotency_key=context.pop("idempotency_key", f"step-{uuid.uuid4().hex}"),
            http=GuardedHttp(secrets=secrets),
            secrets=secrets,
            **context,
        )
        invocation.http.on_exchange = invocation.exchanges.append
        return connector.invoke(action, ready, config, invocation), invocation

    return call
