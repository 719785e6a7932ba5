"""The outbox in process (no worker): rows written in the case's transaction, a redelivered or
duplicated send never sends twice, publish-time checks of connector steps."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from casemgmt.cases.models import Case
from casemgmt.connectors.delivery import backoff_seconds, deliveries_sweep, delivery_send
from casemgmt.connectors.models import Delivery
from casemgmt.workflows.models import CaseStep
from tests.casemgmt.workflows.conftest import Flow, task_step

pytestmark = pytest.mark.django_db


@pytest.fixture
def flow(api, admin_user, settings):
    settings.CONNECTOR_ALLOWED_HOSTS = ["127.0.0.1"]
    return Flow(api, admin_user)


def step(url: str, **extra) -> dict:
    return {"id": "call", "name": "Call", "type": "connector", "connector": "http", "action": "request",
            "config": {"method": "POST", "url": url, "body": {"n": "{{case_number}}"}}, **extra}  # fmt: skip


def test_backoff_doubles_and_is_capped(settings):
    settings.CONNECTOR_RETRY_BASE_SECONDS, settings.CONNECTOR_RETRY_MAX_SECONDS = 1, 60
    assert [backoff_seconds(n) for n in range(1, 9)] == [1, 2, 4, 8, 16, 32, 60, 60]


def test_row_is_written_with_the_case_and_sent_after_commit(
    flow, receiver, django_capture_on_commit_callbacks
):
    flow.workflow([step(f"{receiver.url}/echo", retries=2), task_step("review")])
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        case = flow.case()
    delivery = Delivery.objects.get(case_id=case["id"])
    assert (
        delivery.status == "pending"
        and delivery.max_attempts == 3
        and delivery.inputs["body"] == {"n": case["caseNumber"]}
    )
    assert receiver.received() == [] and callbacks  # nothing is sent before the commit
    delivery_send(delivery_id=str(delivery.pk))
    delivery_send(delivery_id=str(delivery.pk))  # a redelivered message: nothing to claim
    assert len(receiver.received("/echo")) == 1
    delivery.refresh_from_db()
    assert delivery.status == "delivered" and delivery.attempts == 1
    assert CaseStep.objects.get(case_id=case["id"], step_id="call").status == "completed"


def test_a_rolled_back_case_leaves_no_outbox_row(flow, receiver):
    flow.workflow([step(f"{receiver.url}/echo")])
    before = Delivery.objects.count()
    with pytest.raises(RuntimeError), transaction.atomic():  # noqa: PT012 - the raise inside rolls the block back
        flow.case()
        raise RuntimeError("the case's transaction fails after the step became active")
    assert Delivery.objects.count() == before and not Case.objects.filter(case_type__key=flow.key).exists()


def test_a_closed_case_does_not_send(flow, receiver):
    flow.workflow([step(f"{receiver.url}/echo"), task_step("review")])
    case = flow.case()
    assert flow.client.post(f"/cases/{case['id']}/close", {}, format="json").status_code == 200
    delivery = Delivery.objects.get(case_id=case["id"])
    delivery_send(delivery_id=str(delivery.pk))
    delivery.refresh_from_db()
    assert receiver.received() == [] and delivery.status == "dead" and "step_inactive" in delivery.last_error


def test_inputs_that_do_not_render_fail_without_sending(flow, receiver):
    flow.workflow([step(f"{receiver.url}/echo", config={"method": "{{case_data.verb}}", "url": receiver.url}),
                   task_step("review")])  # fmt: skip
    case = flow.case({"amount": 1})
    delivery = Delivery.objects.get(case_id=case["id"])
    assert "method" in delivery.render_error
    delivery_send(delivery_id=str(delivery.pk))
    row = CaseStep.objects.get(case_id=case["id"], step_id="call")
    assert row.status == "failed" and "invalid_input" in row.error and receiver.received() == []


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"connector": "nope"}, "steps[0].connector"),
        ({"action": "nope"}, "steps[0].action"),
        ({"retries": 11}, "steps[0].retries"),
        ({"retries": True}, "steps[0].retries"),
        ({"onFailure": "explode"}, "steps[0].onFailure"),
        ({"config": {"url": "{{#if}}"}}, "steps[0].config.url"),
    ],
)
def test_publish_checks_connector_steps(flow, extra, field):
    body = {"caseTypeKey": flow.key, "name": "Flow", "steps": [{**step("https://x.example"), **extra}]}
    draft = flow.client.post("/workflows", body, format="json")
    assert draft.status_code == 201, draft.content
    published = flow.client.post(f"/workflows/{draft.json()['id']}/publish")
    assert published.status_code == 400
    assert field in [e["field"] for e in published.json()["details"]["errors"]]


@pytest.mark.django_db(transaction=True)
def test_concurrent_sends_of_one_delivery_send_once(flow, receiver, django_capture_on_commit_callbacks):
    """Eight threads (each its own database connection) run the same delivery at once: the
    conditional claim lets exactly one of them call out."""
    flow.workflow([step(f"{receiver.url}/echo"), task_step("review")])
    with django_capture_on_commit_callbacks(execute=False):
        case = flow.case()
    delivery_id = str(Delivery.objects.get(case_id=case["id"]).pk)
    barrier = threading.Barrier(8)

    def run() -> None:
        try:
            barrier.wait()
            delivery_send(delivery_id=delivery_id)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(receiver.received("/echo")) == 1
    assert Delivery.objects.get(pk=delivery_id).status == "delivered"
    assert CaseStep.objects.get(case_id=case["id"], step_id="call").status == "completed"


def test_a_crash_on_every_attempt_ends_dead_and_applies_on_failure(flow, receiver):
    """A worker that dies on each attempt (simulated: the row left `sending` with its lease over
    and no attempts left) is counted like a failure: the sweep dead-letters it and onFailure runs."""
    flow.workflow([step(f"{receiver.url}/echo", retries=1, onFailure="skip"), task_step("review")])
    case = flow.case()
    Delivery.objects.filter(case_id=case["id"]).update(
        status=Delivery.SENDING, attempts=2, claimed_until=timezone.now() - timedelta(seconds=1)
    )
    deliveries_sweep()
    delivery = Delivery.objects.get(case_id=case["id"])
    assert delivery.status == "dead" and "worker lost" in delivery.last_error
    assert flow.statuses(case["id"]) == {"call": "skipped", "review": "active"} and receiver.received() == []
