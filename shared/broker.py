"""kombu's Redis transport with one Redis client per channel, reused, and a channel that says
"connection lost" (rather than crashing the worker) when it outlives its connection.

kombu builds a new redis-py client for every command it sends outside the consuming connection: a
publish, and an agent's bookkeeping of each message it takes and acknowledges. redis-py 8 fills ~170
response callbacks into every new client, so each message cost the worker's main process two client
builds (about 0.05 ms each) for nothing: the clients all share the channel's connection pool anyway,
and a client holds no state of its own between commands. A channel is used by one thread at a time.

When Redis goes away, Celery's worker gathers up its broker connection (`Connection.collect`),
which detaches the transport from its settings, and then closes that connection again. The first
pass can fail half-way on the dead socket of a channel still waiting in BRPOP, leaving that channel
open; the second pass closes it, and closing a channel puts its unacknowledged messages back on
their queue, through a new connection pool built from the transport's settings that are gone by
then. kombu raised AttributeError ("'NoneType' object has no attribute 'hostname'"), which is no
connection error, so Celery stopped the worker ("Unrecoverable error"). A channel whose transport is
detached now raises redis's ConnectionError: Celery ignores it while cleaning up and reconnects.
The messages it could not put back are still in Redis's unacknowledged set, which kombu restores to
their queue once the visibility timeout has passed (and a Redis that died took them anyway; every
task's outbox row or periodic sweep sends its work again).
"""

from __future__ import annotations

from typing import Any

import redis
from kombu.transport import redis as kombu_redis


class Channel(kombu_redis.Channel):
    _reused: tuple[Any, Any] | None = None  # (the connection pool, a client on it)

    def _create_client(self, asynchronous: bool = False) -> Any:
        if asynchronous:
            return super()._create_client(asynchronous=True)
        pool = self.pool
        if self._reused is None or self._reused[0] is not pool:  # a new pool after a reconnect
            self._reused = (pool, super()._create_client())
        return self._reused[1]

    def _get_pool(self, asynchronous: bool = False) -> Any:
        transport = self.connection
        if transport is None or transport.client is None:
            raise redis.exceptions.ConnectionError("the broker connection of this channel is closed")
        return super()._get_pool(asynchronous=asynchronous)


class Transport(kombu_redis.Transport):
    Channel = Channel
