"""Deliveries from the event outbox, by a real Celery worker, to a real HTTP receiver on 127.0.0.1."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging

import pytest
from django.db import transaction

from orchestrator.events.services import event_emit
from orchestrator.webhooks.models import Delivery
from orchestrator.webhooks.services import events_dispatch
from tests.orchestrator.webhooks.receiver import Receiver
from tests.support.processes import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]
SECRET = "whsec-do-not-leak-7f3a9c"
HEADER_TOKEN = "header-token-do-not-leak-55e1"
TASK_DATA = {
    "run_id": "run-1",
    "dag_id": "etl",
    "task_id": "extract",
    "task_run_id": "extract_0a1b2c3d",
    "status": "failed",
    "start_time": "2026-11-22T10:00:00.000Z",
    "end_time": "2026-11-22T10:00:05.000Z",
    "duration_seconds": 5,
}


def register(api, receiver, path="/hook", **overrides):
    body = {
        "name": "receiver",
        "url": receiver.url + path,
        "events": ["task.failed"],
        "secret": SECRET,
        "headers": {"X-Team": "ops", "Authorization": f"Bearer {HEADER_TOKEN}"},
        "filters": {},
    }
    body.update(overrides)
    response = api.post("/api/webhooks", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def emit(type="task.failed", **data):
    with transaction.atomic():
        event = event_emit(type=type, data={**TASK_DATA, **data})
    dispatch()
    return event


def dispatch():
    """What the dispatcher does (the beat's webhooks sweep, an agent's recovery sweep): turns the
    events not dispatched yet into deliveries, which the worker sends."""
    while events_dispatch():
        pass


def expected_signature(body: bytes) -> str:
    return "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()


def test_delivery_payload_headers_and_signature(api, control_worker):
    with Receiver() as receiver:
        webhook_id = register(api, receiver)
        event = emit()
        (request,) = wait_for(lambda: receiver.received("/hook"), what="webhook delivery")
        payload = json.loads(request.body)
        assert payload == {"event": "task.failed", "timestamp": payload["timestamp"], "data": TASK_DATA}
        assert payload["timestamp"].endswith("Z")
        assert request.headers["X-Service-Signature"] == expected_signature(request.body)
        assert (
            request.headers["X-Team"] == "ops"
            and request.headers["Authorization"] == f"Bearer {HEADER_TOKEN}"
        )
        assert request.headers["Content-Type"] == "application/json"
        assert request.headers["X-Service-Event"] == "task.failed"
        assert int(request.headers["X-Service-Timestamp"]) > 1_700_000_000
        signed = request.headers["X-Service-Timestamp"].encode() + b"." + request.body
        assert request.headers["X-Service-Signature-Timestamped"] == expected_signature(signed)
        delivery = wait_for(
            lambda: Delivery.objects.filter(event=event, status="succeeded").first(), what="recorded"
        )
        assert request.headers["X-Service-Delivery"] == str(delivery.id)

        listing = api.get(f"/api/webhooks/{webhook_id}/deliveries").json()
        (item,) = listing["deliveries"]
        assert item["status"] == "succeeded" and item["attempts"] == 1 and item["event"] == "task.failed"
        (attempt,) = item["attempt_log"]
        assert attempt["status_code"] == 200 and attempt["succeeded"] is True and attempt["error"] is None
        assert isinstance(attempt["latency_ms"], float) and attempt["number"] == 1


def test_agent_event_payload(api, control_worker):
    with Receiver() as receiver:
        register(api, receiver, events=["agent.offline"])
        agent = {"agent_id": "agent@host", "status": "offline", "last_heartbeat": "2026-11-22T10:00:00.000Z",
                 "queues": ["default"], "tags": ["gpu:true"]}  # fmt: skip
        with transaction.atomic():
            event_emit(type="agent.offline", data=agent)
        dispatch()

        def ours():
            payloads = [json.loads(r.body) for r in receiver.received()]
            return [p for p in payloads if p["data"]["agent_id"] == "agent@host"]

        (payload,) = wait_for(ours, what="agent delivery")
        assert payload["event"] == "agent.offline" and payload["data"] == agent


def test_events_and_filters_are_honoured(api, control_worker):
    with Receiver() as receiver:
        register(api, receiver, path="/all")
        register(api, receiver, path="/etl", filters={"dag_id": "etl"})
        register(api, receiver, path="/other-dag", filters={"dag_id": "billing"})
        register(api, receiver, path="/load-task", filters={"dag_id": "etl", "task_id": "load"})
        register(api, receiver, path="/completed-only", events=["task.completed"])
        emit()
        emit(type="task.running")  # subscribed by nobody
        emit(task_id="load", task_run_id="load_00000001")
        wait_for(lambda: len(receiver.received()) == 5, what="matching deliveries")
        wait_for(lambda: not Delivery.objects.exclude(status="succeeded").exists(), what="all recorded")
        paths = sorted(r.path for r in receiver.received())
        assert paths == ["/all", "/all", "/etl", "/etl", "/load-task"]
        assert json.loads(receiver.received("/load-task")[0].body)["data"]["task_id"] == "load"
        assert Delivery.objects.count() == 5


def test_retries_with_backoff_until_success(api, control_worker):
    with Receiver(statuses=[500, 500]) as receiver:
        webhook_id = register(api, receiver)
        event = emit()
        wait_for(
            lambda: Delivery.objects.filter(event=event, status="succeeded").exists(), what="third attempt"
        )
        requests = receiver.received()
        assert len(requests) == 3
        assert len({r.headers["X-Service-Delivery"] for r in requests}) == 1
        assert len({r.body for r in requests}) == 1
        assert all(r.headers["X-Service-Signature"] == expected_signature(r.body) for r in requests)
        (item,) = api.get(f"/api/webhooks/{webhook_id}/deliveries").json()["deliveries"]
        assert item["attempts"] == 3
        assert [(a["number"], a["status_code"], a["succeeded"]) for a in item["attempt_log"]] == [
            (1, 500, False),
            (2, 500, False),
            (3, 200, True),
        ]
        assert item["attempt_log"][0]["error"] == "HTTP 500"


def test_gives_up_after_five_attempts(api, control_worker):
    with Receiver(statuses=[503] * 10) as receiver:
        register(api, receiver)
        event = emit()
        delivery = wait_for(
            lambda: Delivery.objects.filter(event=event, status="failed").first(), what="give up"
        )
        assert delivery.attempts == 5 and delivery.attempt_rows.count() == 5
        assert len(receiver.received()) == 5


def test_unreachable_receiver_records_the_error(api, control_worker):
    with Receiver() as receiver:
        url = receiver.url
    # the receiver is closed now: connections are refused
    response = api.post(
        "/api/webhooks",
        {"name": "dead", "url": url + "/x", "events": ["task.failed"], "secret": SECRET},
        format="json",
    )
    assert response.status_code == 201
    event = emit()
    delivery = wait_for(
        lambda: Delivery.objects.filter(event=event, status="failed").first(), timeout=30, what="give up"
    )
    errors = [a.error for a in delivery.attempt_rows.all()]
    assert len(errors) == 5 and all(e == "connection refused" for e in errors)
    assert all(a.status_code is None for a in delivery.attempt_rows.all())


def test_outbox_without_kick_is_picked_up_by_the_dispatcher(api, control_worker):
    """An event written with no job queued for it is delivered when the dispatcher runs (the
    beat's webhooks sweep or an agent's recovery sweep), once."""
    with Receiver() as receiver:
        register(api, receiver)
        event = event_emit(type="task.failed", data=TASK_DATA)  # no kick
        assert events_dispatch() >= 1
        wait_for(lambda: receiver.received(), what="delivery from the dispatcher")
        event.refresh_from_db()
        assert event.dispatched_at is not None
        assert events_dispatch() == 0  # dispatched once, never twice


def test_secret_never_appears_in_responses_or_logs(api, control_worker, caplog):
    caplog.set_level(logging.DEBUG)
    with Receiver(statuses=[500]) as receiver:
        webhook_id = register(api, receiver)
        responses = [api.get("/api/webhooks"), api.get(f"/api/webhooks/{webhook_id}")]
        event = emit()
        wait_for(lambda: Delivery.objects.filter(event=event, status="succeeded").exists(), what="delivery")
        responses.append(api.get(f"/api/webhooks/{webhook_id}/deliveries"))
    for response in responses:
        assert SECRET.encode() not in response.content and HEADER_TOKEN.encode() not in response.content
    worker_log = control_worker.log_text()
    assert (
        f"webhook delivery {Delivery.objects.get(event=event).id}" in worker_log
    )  # the log is the right one
    for text in (worker_log, caplog.text):
        assert SECRET not in text and HEADER_TOKEN not in text
