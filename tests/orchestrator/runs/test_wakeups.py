"""Wake-ups as sent by `runs.wakeups` (by task name: Celery's message builder and publisher called
directly, or `send_task` for a delayed one) against those `apply_async` sends, read back from the
real broker."""

from __future__ import annotations

import uuid

import pytest

from orchestrator.runs.tasks import execute_task_run
from orchestrator.runs.wakeups import Wakeup, send_now

# What differs by nature between two messages: their ids, and the broker's own delivery fields.
PER_MESSAGE = {"id", "root_id", "correlation_id", "delivery_tag"}


def take_all(queue: str, count: int) -> list:
    with execute_task_run.app.connection_for_read() as conn, conn.SimpleQueue(queue) as q:
        messages = []
        for _ in range(count):
            message = q.get(timeout=5)
            message.ack()
            messages.append(message)
        with pytest.raises(q.Empty):
            q.get(timeout=0.2)
        return messages


def shape(message) -> dict:
    properties = {k: v for k, v in message.properties.items() if k not in PER_MESSAGE | {"delivery_info"}}
    headers = {k: v for k, v in message.headers.items() if k not in PER_MESSAGE}
    return {
        "headers": headers,
        "properties": properties,
        "routing": message.delivery_info.get("routing_key"),
        "content": (message.content_type, message.content_encoding),
        "body": message.decode(),
    }


def test_wakeups_are_the_messages_apply_async_sends():
    queue = f"wakeup-probe-{uuid.uuid4().hex[:8]}"
    send_now([Wakeup("tr_a", queue, 0), Wakeup("tr_b", queue, 2)])
    execute_task_run.apply_async(args=["tr_a", 0], queue=queue)
    execute_task_run.apply_async(args=["tr_b", 2], queue=queue)
    ours_a, ours_b, celery_a, celery_b = (shape(m) for m in take_all(queue, 4))
    assert ours_a == celery_a and ours_b == celery_b
    assert ours_a["body"][0] == ["tr_a", 0] and ours_a["headers"]["task"] == execute_task_run.name
    assert ours_a["headers"]["timelimit"] == [execute_task_run.time_limit, execute_task_run.soft_time_limit]


def test_a_delayed_wakeup_carries_its_eta():
    queue = f"wakeup-probe-{uuid.uuid4().hex[:8]}"
    send_now([Wakeup("tr_now", queue, 0), Wakeup("tr_later", queue, 1, countdown=0.5)])
    first, second = take_all(queue, 2)
    eta = {m.decode()[0][0]: m.headers["eta"] for m in (first, second)}
    assert eta["tr_now"] is None and eta["tr_later"] is not None


def test_a_delayed_wakeup_is_the_message_apply_async_sends():
    queue = f"wakeup-probe-{uuid.uuid4().hex[:8]}"
    send_now([Wakeup("tr_later", queue, 1, countdown=0.5)])
    execute_task_run.apply_async(args=["tr_later", 1], queue=queue, countdown=0.5)
    ours, celery = (shape(m) for m in take_all(queue, 2))
    assert ours["headers"].pop("eta") is not None and celery["headers"].pop("eta") is not None
    assert ours == celery
