"""Fixtures for the orchestrator: real Celery worker processes bound to the test database."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from rest_framework.test import APIClient

from tests.support.processes import database_url, start_celery_worker, wait_for


@pytest.fixture
def api() -> APIClient:
    return APIClient()


@pytest.fixture(scope="session")
def subprocess_env(django_db_setup, django_db_blocker) -> dict[str, str]:
    with django_db_blocker.unblock():
        url = database_url(connection.settings_dict)
    return {"DJANGO_SETTINGS_MODULE": "orchestrator.config.settings.test", "ORCH_DATABASE_URL": url}


@pytest.fixture(scope="session")
def control_worker(subprocess_env):
    """A worker on the orchestrator's control queue (housekeeping tasks)."""
    from django.conf import settings
    from django.core.cache import cache

    from orchestrator.system.tasks import ping

    worker = start_celery_worker(
        name="orch-control",
        app="orchestrator.config",
        queues=[settings.CELERY_DEFAULT_QUEUE],
        env=subprocess_env,
    )
    token = uuid.uuid4().hex
    ping.delay(token)
    try:
        wait_for(
            lambda: cache.get(f"ping:{token}") == "pong" or not worker.alive(),
            timeout=60,
            what="orchestrator worker",
        )
        assert worker.alive(), worker.log_text()
        yield worker
    finally:
        worker.stop()
