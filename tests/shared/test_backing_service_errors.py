"""A Redis, broker or database outage that reaches a view is a 503 service_unavailable, never a 500."""

from __future__ import annotations

import pytest
import redis
from django.db import DatabaseError, InterfaceError, ProgrammingError
from django.db import OperationalError as DjangoOperationalError
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


def _dead_database_error() -> Exception:
    """The error Django raises for a PostgreSQL that does not answer (nothing listens on the port)."""
    from django.db import connections

    from tests.support.processes import free_port

    live = connections["default"]
    dead = type(live)({**live.settings_dict, "PORT": free_port()}, alias="default")
    with pytest.raises(DatabaseError) as raised:
        dead.ensure_connection()
    return raised.value


@pytest.mark.django_db
def test_a_real_database_outage_is_503():
    error = _dead_database_error()
    assert isinstance(error, DjangoOperationalError)
    response = exception_handler(error, {})
    assert response.status_code == 503
    assert response.data["code"] == "service_unavailable"


def test_a_connection_lost_mid_request_is_503():
    response = exception_handler(InterfaceError("connection already closed"), {})
    assert response.status_code == 503


def test_other_database_errors_stay_500():
    # A programming error (a bug) must not pass for an outage a client should retry.
    assert exception_handler(ProgrammingError("relation does not exist"), {}).status_code == 500
