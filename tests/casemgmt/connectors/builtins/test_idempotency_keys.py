"""Slack and Jira calls of one outbox delivery carry one `Idempotency-Key` (the delivery id) on
every attempt, so a retry after a failure or a timeout is recognisable as the same call."""

from __future__ import annotations

import pytest
from django.utils import timezone

from casemgmt.connectors.delivery import delivery_send
from casemgmt.connectors.models import Delivery
from tests.casemgmt.connectors.builtins.conftest import JIRA_EMAIL, JIRA_TOKEN, SLACK_TOKEN
from tests.casemgmt.workflows.conftest import Flow, ok, task_step

pytestmark = pytest.mark.django_db


@pytest.fixture
def flow(api, admin_user, loopback_allowed) -> Flow:
    return Flow(api, admin_user)


def slack_step(flow: Flow, server) -> tuple[dict, str]:
    config = {"token": SLACK_TOKEN, "apiUrl": server.api_url}
    ok(flow.client.put("/connectors/slack/config", {"config": config}, format="json"))
    step = {"connector": "slack", "action": "send_message",
            "config": {"channel": "C0PUBLIC01", "text": "New claim {{case_number}}"}}  # fmt: skip
    return step, "/api/chat.postMessage"


def jira_step(flow: Flow, server) -> tuple[dict, str]:
    config = {"baseUrl": server.base_url, "email": JIRA_EMAIL, "apiToken": JIRA_TOKEN}
    ok(flow.client.put("/connectors/jira/config", {"config": config}, format="json"))
    step = {"connector": "jira", "action": "create_issue",
            "config": {"project": "OPS", "summary": "Review {{case_number}}"}}  # fmt: skip
    return step, "/rest/api/3/issue"


@pytest.mark.parametrize(
    ("make_step", "server_fixture"), [(slack_step, "slack_server"), (jira_step, "jira_server")]
)
def test_a_retried_delivery_sends_the_same_key(flow, request, make_step, server_fixture):
    server = request.getfixturevalue(server_fixture)
    step, path = make_step(flow, server)
    flow.workflow(
        [{"id": "call", "name": "Call", "type": "connector", "retries": 2, **step}, task_step("review")]
    )
    case = flow.case()
    delivery = Delivery.objects.get(case_id=case["id"])
    server.fail_next(503, {"ok": False, "error": "service_unavailable"})
    delivery_send(delivery_id=str(delivery.pk))
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("pending", 1), delivery.last_error
    Delivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())  # the backoff is over
    delivery_send(delivery_id=str(delivery.pk))
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("delivered", 2), delivery.last_error
    sent = [r for r in server.requests if r.path == path]
    assert len(sent) == 2
    assert [r.headers.get("idempotency-key") for r in sent] == [str(delivery.pk)] * 2
