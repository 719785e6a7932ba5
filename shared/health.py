"""Probes used by both services' health and readiness endpoints."""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.conf import settings
from django.db import connections


@dataclass(frozen=True)
class Probe:
    ok: bool
    latency_ms: float
    error: str | None = None


def probe_database(alias: str = "default") -> Probe:
    started = time.perf_counter()
    try:
        with connections[alias].cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any driver error means "not ready"
        return Probe(False, (time.perf_counter() - started) * 1000, type(exc).__name__)
    return Probe(True, (time.perf_counter() - started) * 1000)


def probe_broker(timeout: float = 1.0) -> Probe:
    """Redis brokers are pinged; the embedded filesystem broker is ready when its folder exists."""
    url: str = getattr(settings, "CELERY_BROKER_URL", "")
    started = time.perf_counter()
    if url.startswith(("redis://", "rediss://")):
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        try:
            # One try: redis-py otherwise retries a refused connection three times with backoff,
            # and a probe must answer within its timeout.
            client = redis.Redis.from_url(
                url, socket_connect_timeout=timeout, socket_timeout=timeout, retry=Retry(NoBackoff(), 0)
            )
            client.ping()
            client.close()
        except Exception as exc:  # connection refused, timeout, auth...
            return Probe(False, (time.perf_counter() - started) * 1000, type(exc).__name__)
        return Probe(True, (time.perf_counter() - started) * 1000)
    return Probe(True, 0.0)
