"""kombu's Redis transport with one Redis client per channel, reused.

kombu builds a new redis-py client for every command it sends outside the consuming connection: a
publish, and an agent's bookkeeping of each message it takes and acknowledges. redis-py 8 fills ~170
response callbacks into every new client, so each message cost the worker's main process two client
builds (about 0.05 ms each) for nothing: the clients all share the channel's connection pool anyway,
and a client holds no state of its own between commands. A channel is used by one thread at a time.
"""

from __future__ import annotations

from typing import Any

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


class Transport(kombu_redis.Transport):
    Channel = Channel
