"""A Redis or broker outage that reaches a view is a 503 service_unavailable, never a 500."""

from __future__ import annotations

import pytest
import redis
from kombu.exceptions import OperationalError

from shared.api.handler import exception_handler


@pytest.mark.parametrize(
    "exc",
    [redis.ConnectionError("Connection refused"), redis.TimeoutError("timed out"), OperationalError("down")],
    ids=["redis-connection", "redis-timeout", "broker"],
)
def test_backing_service_outage_is_503(exc):
    response = exception_handler(exc, {})
    assert response.status_code == 503
    assert response.data["code"] == "service_unavailable" and response.data["error"] is True


def test_a_real_cache_outage_is_503(settings):
    from django.core.cache import caches

    settings.CACHES = {
        **settings.CACHES,
        "dead": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
        },
    }
    with pytest.raises(redis.ConnectionError) as raised:
        caches["dead"].get("anything")
    assert exception_handler(raised.value, {}).status_code == 503
