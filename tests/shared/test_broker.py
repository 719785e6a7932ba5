"""shared/broker.py: kombu's Redis transport reusing one client per channel, on a real Redis."""

from __future__ import annotations

import uuid

import pytest
from kombu import Connection

from shared.conf import isolation_prefix

BROKER = "redis://127.0.0.1:6379/3"


def connect() -> Connection:
    return Connection(
        BROKER,
        transport="shared.broker:Transport",
        transport_options={"global_keyprefix": isolation_prefix()},
    )


def test_messages_go_through_and_the_channel_builds_one_client():
    queue = f"broker-probe-{uuid.uuid4().hex[:8]}"
    with connect() as conn, conn.SimpleQueue(queue) as q:
        channel = q.channel
        for i in range(3):
            q.put({"n": i})
        received = []
        for _ in range(3):
            message = q.get(timeout=5)
            received.append(message.payload["n"])
            message.ack()
        assert received == [0, 1, 2]
        assert channel._create_client() is channel._create_client()
        with pytest.raises(q.Empty):  # each taken once, acknowledged, none delivered again
            q.get(timeout=0.5)


def test_a_new_connection_pool_gets_a_new_client():
    with connect() as conn:
        channel = conn.default_channel
        first = channel._create_client()
        channel._pool = None  # what kombu does when it drops a broken pool
        second = channel._create_client()
        assert second is not first and second.connection_pool is channel.pool
        assert second.ping()
