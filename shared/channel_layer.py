"""The Redis channel layer for WebSockets, with a bounded connection pool that waits, and retries of
its group calls on a connection error.

channels_redis opens one redis-py pool per event loop. redis-py 8's asyncio pool holds at most 100
connections and raises MaxConnectionsError for the 101st command in flight; when many sockets
closed at once (a deploy, a proxy restart, a network blip), most of their `group_discard` calls
failed that way and the closed sockets' channels stayed in the tenant's group: every broadcast was
still written to each of them until the group expired. Here the pool is a BlockingConnectionPool:
a command waits (bounded) for a free connection instead of failing.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from channels_redis.core import RedisChannelLayer as BaseRedisChannelLayer
from redis import exceptions as redis_errors
from redis.asyncio import BlockingConnectionPool

from shared import backoff

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Failures worth another try: a connection dropped (a Redis restart leaves every pooled connection
# dead, and redis-py replaces one only after it failed), refused while Redis starts, or no pooled
# connection free in time. Anything else (a script error, a bad argument) would fail again.
TRANSIENT = (redis_errors.ConnectionError, redis_errors.TimeoutError, ConnectionError, asyncio.TimeoutError)


class RedisChannelLayer(BaseRedisChannelLayer):
    """channels_redis with a waiting pool: `max_connections` (per event loop) and `timeout` (seconds
    a command waits for a free connection) come from the host's settings."""

    def create_pool(self, index: int) -> Any:
        host = dict(self.hosts[index])
        address = host.pop("address")
        return BlockingConnectionPool.from_url(address, **host)


async def retrying(
    call: Callable[[], Awaitable[T]], *, what: str, attempts: int = 4, first_delay: float = 0.1
) -> T:
    """Runs `call()` again after a transient Redis error, at most `attempts` times in all, waiting
    `first_delay` doubled at each try (with jitter, so sockets that failed together do not come back
    together). The last error is raised."""
    for attempt in range(1, attempts + 1):
        try:
            return await call()
        except TRANSIENT as exc:
            if attempt == attempts:
                raise
            delay = backoff.exponential(attempt, base=first_delay)
            logger.warning("%s failed (%s); try %d of %d in %.2fs", what, exc, attempt + 1, attempts, delay)
            await asyncio.sleep(delay * random.uniform(0.5, 1.5))  # noqa: S311 - retry jitter, not a secret
    raise AssertionError("unreachable")
