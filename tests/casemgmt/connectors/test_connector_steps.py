"""Connector steps end to end: a published workflow, a case, a real Celery worker sending to a real
local server through the outbox; retries, every onFailure mode, dead letters and their replay, a
worker killed mid-call, secrets kept out of the worker's log."""

from __future__ import annotations

import hashlib
import hmac
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from casemgmt.connectors.models import Delivery, Invocation
from casemgmt.connectors.tasks import deliveries_sweep
from casemgmt.workflows.models import CaseStep
from tests.casemgmt.workflows.conftest import Flow, ok, task_step
from tests.support.processes import start_celery_worker, wait_for

QUEUE = f"case.connectors-{uuid.uuid4().hex[:6]}"
SECRET = "whsec-do-not-leak-4711"
TOKEN = "Bearer tok-do-not-leak-0815"


def worker_env(subprocess_env, **extra: str) -> dict[str, str]:
    return {
        **subprocess_env,
        "CASE_CONNECTOR_ALLOWED_HOSTS": "127.0.0.1",
        "CASE_CONNECTOR_RETRY_BASE_SECONDS": "0.05",
        "CASE_CONNECTOR_RETRY_MAX_SECONDS": "0.2",
        "CASE_CONNECTOR_TIMEOUT_SECONDS": "5",
        "CASE_CONNECTOR_QUEUE": QUEUE,
        **extra,
    }


@pytest.fixture(scope="module")
def connector_worker(subprocess_env):
    worker = start_celery_worker(
        name="connector-worker", app="casemgmt.config", queues=[QUEUE], env=worker_env(subprocess_env)
    )
    yield worker
    worker.stop()


@pytest.fixture
def flow(api, admin_user, settings):
    settings.CONNECTOR_QUEUE = QUEUE  # the test process queues where the worker listens
    settings.CONNECTOR_ALLOWED_HOSTS = ["127.0.0.1"]
    return Flow(api, admin_user)


def http_step(url: str, **extra) -> dict:
    config = {"method": "POST", "url": url, "headers": {"Authorization": TOKEN},
              "body": {"case": "{{case_number}}", "amount": "{{case_data.amount}}"}}  # fmt: skip
    return {"id": "call", "name": "Call", "type": "connector", "connector": "http", "action": "request",
            "config": config, **extra}  # fmt: skip


def wait_step(case_id: str, step_id: str, statuses=("completed", "failed", "skipped")) -> CaseStep:
    return wait_for(
        lambda: (
            CaseStep.objects.filter(case_id=case_id, step_id=step_id, status__in=statuses).first()
            or CaseStep.objects.filter(case_id=case_id, step_id=step_id, escalated=True).first()
        ),
        timeout=30,
        what=f"step {step_id} to finish",
    )


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
class TestThroughTheWorker:
    def test_http_step_sends_and_stores_the_result(self, flow, connector_worker, receiver):
        flow.workflow([http_step(f"{receiver.url}/echo"), task_step("review")])
        case = flow.case({"amount": 12})
        step = wait_step(case["id"], "call")
        assert step.status == "completed", (step.error, connector_worker.log_text()[-3000:])
        [got] = receiver.received("/echo")
        assert got.method == "POST" and got.json() == {"case": case["caseNumber"], "amount": "12"}
        delivery = Delivery.objects.get(step=step)
        assert got.headers["Idempotency-Key"] == str(delivery.id) and delivery.status == "delivered"
        assert step.result["statusCode"] == 200 and step.result["body"]["method"] == "POST"
        assert flow.statuses(case["id"]) == {"call": "completed", "review": "active"}
        log = ok(flow.client.get(f"/connectors/invocations?caseId={case['id']}"))["data"]
        assert [(r["stepId"], r["success"], r["requestHeaders"]["Authorization"]) for r in log] == [
            ("call", True, "***")
        ]

    def test_webhook_is_signed_and_carries_case_data_and_step_results(self, flow, connector_worker, receiver):
        ok(flow.client.put("/connectors/webhook/config", {"config": {"secret": SECRET}}, format="json"))
        first = http_step(f"{receiver.url}/echo")
        hook = {"id": "notify", "name": "Notify", "type": "connector", "connector": "webhook", "action": "send",
                "config": {"url": f"{receiver.url}/hook", "event": "claim.checked"}, "dependsOn": ["call"]}  # fmt: skip
        flow.workflow([first, hook])
        case = flow.case({"amount": 99, "title": "Roof"})
        assert wait_step(case["id"], "notify").status == "completed", connector_worker.log_text()[-3000:]
        [got] = receiver.received("/hook")
        expected = "sha256=" + hmac.new(SECRET.encode(), got.body, hashlib.sha256).hexdigest()
        assert hmac.compare_digest(got.headers["X-Webhook-Signature"], expected)
        body = got.json()
        assert body["event"] == "claim.checked" and body["caseId"] == case["id"]
        assert (
            body["caseData"] == {"amount": 99, "title": "Roof"} and body["caseNumber"] == case["caseNumber"]
        )
        assert body["stepResults"]["call"]["statusCode"] == 200
        assert got.headers["X-Webhook-Id"] == got.headers["Idempotency-Key"]
        assert (
            SECRET not in connector_worker.log_text() and "tok-do-not-leak" not in connector_worker.log_text()
        )

    def test_transient_failures_are_retried(self, flow, connector_worker, receiver):
        flow.workflow([http_step(f"{receiver.url}/flaky/2", retries=3), task_step("review")])
        case = flow.case()
        step = wait_step(case["id"], "call")
        assert step.status == "completed"
        assert len(receiver.received("/flaky/2")) == 3
        keys = {r.headers["Idempotency-Key"] for r in receiver.received("/flaky/2")}
        assert len(keys) == 1  # one key for every attempt of the step
        attempts = Invocation.objects.filter(case_id=case["id"]).order_by("attempt")
        assert [(i.attempt, i.status_code, i.success) for i in attempts] == [
            (1, 503, False),
            (2, 503, False),
            (3, 200, True),
        ]

    def test_fail_case_after_the_last_retry_then_replay(self, flow, connector_worker, receiver):
        flow.workflow([http_step(f"{receiver.url}/status/503", retries=1), task_step("review")])
        case = flow.case()
        step = wait_step(case["id"], "call")
        assert step.status == "failed" and "after 2 attempt(s)" in step.error and step.attempts == 2
        assert flow.statuses(case["id"]) == {"call": "failed", "review": "skipped"}
        assert len(receiver.received("/status/503")) == 2
        dead = ok(flow.client.get("/connectors/deliveries?status=dead"))["data"]
        assert [(d["caseId"], d["stepId"], d["attempts"], d["maxAttempts"]) for d in dead] == [
            (case["id"], "call", 2, 2)
        ]
        replayed = ok(flow.client.post(f"/connectors/deliveries/{dead[0]['id']}/replay"))
        assert replayed["status"] == "pending" and replayed["replays"] == 1
        wait_for(lambda: len(receiver.received("/status/503")) == 4, what="the replayed attempts")
        wait_for(lambda: Delivery.objects.get(pk=dead[0]["id"]).status == "dead", what="dead again")
        assert {r.headers["Idempotency-Key"] for r in receiver.received("/status/503")} == {dead[0]["id"]}
        again = flow.client.post(f"/connectors/deliveries/{dead[0]['id']}/replay")
        assert again.status_code == 200
        wait_for(lambda: Delivery.objects.get(pk=dead[0]["id"]).status == "dead", what="dead a third time")

    def test_permanent_failure_is_not_retried_and_skip_goes_on(self, flow, connector_worker, receiver):
        flow.workflow(
            [http_step(f"{receiver.url}/status/400", retries=3, onFailure="skip"), task_step("review")]
        )
        case = flow.case()
        assert wait_step(case["id"], "call").status == "skipped"
        assert len(receiver.received("/status/400")) == 1
        assert flow.statuses(case["id"]) == {"call": "skipped", "review": "active"}

    def test_escalate_opens_a_human_task(self, flow, connector_worker, receiver, api, make_user, tenant):
        form = {"type": "object", "required": ["done"], "properties": {"done": {"type": "boolean"}}}
        flow.workflow([http_step(f"{receiver.url}/status/500", retries=0, onFailure="escalate", formSchema=form),
                       task_step("review")])  # fmt: skip
        case = flow.case()
        step = wait_step(case["id"], "call")
        assert step.escalated and step.is_task and "HTTP 500" in step.escalation_reason
        person = make_user(tenant, permissions=["tasks:read", "tasks:complete"])
        [task] = ok(api(person).get("/tasks/inbox"))["data"]
        assert task["stepId"] == "call" and task["escalated"] is True
        ok(api(person).post(f"/tasks/{case['id']}/call/complete", {"data": {"done": True}}, format="json"))
        assert flow.statuses(case["id"]) == {"call": "completed", "review": "active"}

    def test_unsafe_target_fails_without_retry(self, flow, connector_worker, settings):
        # The worker's allow-list names 127.0.0.1 only; 10.x is private.
        flow.workflow([http_step("http://10.255.255.1/x", retries=3), task_step("review")])
        case = flow.case()
        step = wait_step(case["id"], "call")
        assert step.status == "failed" and "unsafe_target" in step.error and step.attempts == 1

    def test_sweep_sends_a_row_whose_message_was_lost(self, flow, connector_worker, receiver, settings):
        flow.workflow([http_step(f"{receiver.url}/echo"), task_step("review")])
        settings.CONNECTOR_QUEUE = f"case.nobody-{uuid.uuid4().hex[:6]}"  # the kick at commit is lost
        case = flow.case()
        settings.CONNECTOR_QUEUE = QUEUE
        delivery = Delivery.objects.get(case_id=case["id"])
        assert delivery.status == "pending" and receiver.received() == []
        Delivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now() - timedelta(minutes=1))
        assert deliveries_sweep() == 1
        assert wait_step(case["id"], "call").status == "completed"
        assert len(receiver.received("/echo")) == 1


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_worker_killed_mid_delivery_neither_loses_nor_doubles(flow, subprocess_env, receiver, settings):
    """SIGKILL while the receiver holds the request: the claim outlives the worker, a redelivered
    message cannot claim it again, the sweep takes it back after the lease, and the next attempt
    carries the same idempotency key; the step completes once, with one successful invocation."""
    queue = f"case.kill-{uuid.uuid4().hex[:6]}"
    settings.CONNECTOR_QUEUE = queue
    env = worker_env(subprocess_env, CASE_CONNECTOR_QUEUE=queue, CASE_CONNECTOR_ATTEMPT_LEASE_SECONDS="1")
    first = start_celery_worker(name="connector-doomed", app="casemgmt.config", queues=[queue], env=env)
    try:
        flow.workflow([http_step(f"{receiver.url}/hold"), task_step("review")])
        case = flow.case()
        wait_for(lambda: receiver.received("/hold"), timeout=30, what="the call to reach the receiver")
        first.kill()
        first.proc.wait(timeout=10)
    finally:
        first.stop()
    receiver.release.set()
    delivery = Delivery.objects.get(case_id=case["id"])
    assert delivery.status == "sending" and delivery.attempts == 1  # not lost: still claimed
    second = start_celery_worker(name="connector-heir", app="casemgmt.config", queues=[queue], env=env)
    try:

        def swept_and_done() -> bool:
            deliveries_sweep()
            return Delivery.objects.get(pk=delivery.pk).status == "delivered"

        wait_for(swept_and_done, timeout=40, interval=0.5, what="the sweep to resend after the lease")
        step = wait_step(case["id"], "call")
    finally:
        second.stop()
    assert step.status == "completed" and flow.statuses(case["id"]) == {
        "call": "completed",
        "review": "active",
    }
    held = receiver.received("/hold")
    assert len(held) == 2 and {r.headers["Idempotency-Key"] for r in held} == {str(delivery.pk)}
    assert Invocation.objects.filter(delivery_id=delivery.pk, success=True).count() == 1
    deliveries_sweep()  # nothing left to do: no further send
    assert len(receiver.received("/hold")) == 2
