"""Fixtures for the case service: tenants, users and tokens made through real services, plus real
worker and ASGI server processes bound to the test database."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from casemgmt.accounts.models import Role, User
from casemgmt.accounts.services import user_create
from casemgmt.accounts.tenants import tenant_create
from casemgmt.accounts.tokens import issue_for
from casemgmt.tenancy.models import Tenant
from tests.support.processes import (
    database_url,
    start_celery_worker,
    start_procfile_server,
    start_ready_asgi_server,
    wait_for,
)

PASSWORD = "correct-horse-battery-staple-42"


@pytest.fixture
def tenant(db) -> Tenant:
    return tenant_create(
        name=f"Acme {uuid.uuid4().hex[:8]}",
        admin_email=f"admin-{uuid.uuid4().hex[:8]}@acme.test",
        admin_password=PASSWORD,
    )


@pytest.fixture
def other_tenant(db) -> Tenant:
    return tenant_create(
        name=f"Globex {uuid.uuid4().hex[:8]}",
        admin_email=f"admin-{uuid.uuid4().hex[:8]}@globex.test",
        admin_password=PASSWORD,
    )


@pytest.fixture
def make_user(db) -> Callable[..., User]:
    def make(
        tenant: Tenant, *, permissions: list[str] | None = None, roles: list[str] | None = None, **fields: Any
    ) -> User:
        chosen = list(Role.objects.filter(tenant=tenant, name__in=roles or []))
        if permissions is not None:
            chosen.append(
                Role.objects.create(
                    tenant=tenant,
                    name=f"r-{uuid.uuid4().hex[:8]}",
                    display_name="Test role",
                    permissions=permissions,
                )
            )
        return user_create(
            tenant=tenant,
            email=fields.pop("email", f"user-{uuid.uuid4().hex[:10]}@example.test"),
            display_name=fields.pop("display_name", "Test User"),
            roles=chosen,
            password=fields.pop("password", PASSWORD),
            **fields,
        )

    return make


@pytest.fixture
def admin_user(tenant) -> User:
    return User.objects.get(tenant=tenant, roles__name="admin")


def admin_client(user: User) -> Client:
    """A browser session signed in to the Django admin (or console) as `user`."""
    client = Client()
    assert client.login(email=user.email, password=PASSWORD)
    return client


def client_for(user: User | None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {issue_for(user).token}")
    return client


@pytest.fixture
def api() -> Callable[[User | None], APIClient]:
    """`api(user)` is a client authenticated as that user; `api(None)` is anonymous."""
    return client_for


@pytest.fixture(scope="session")
def subprocess_env(django_db_setup, django_db_blocker) -> dict[str, str]:
    """Environment for child processes: test settings, the test database and this xdist worker's
    Redis key prefix (inherited through PYTEST_XDIST_WORKER / TEST_RUN_TOKEN)."""
    with django_db_blocker.unblock():
        url = database_url(connection.settings_dict)
    return {"DJANGO_SETTINGS_MODULE": "casemgmt.config.settings.test", "CASE_DATABASE_URL": url}


@pytest.fixture(scope="session")
def case_worker(subprocess_env):
    """A real Celery worker consuming the case service's queues (Redis broker)."""
    from django.conf import settings
    from django.core.cache import cache

    from casemgmt.ops.tasks import ping

    worker = start_celery_worker(
        name="case-worker", app="casemgmt.config", queues=[settings.CELERY_DEFAULT_QUEUE], env=subprocess_env
    )
    token = uuid.uuid4().hex
    ping.delay(token)
    try:
        wait_for(
            lambda: cache.get(f"ping:{token}") == "pong" or not worker.alive(),
            timeout=60,
            what="case worker to start",
        )
        assert worker.alive(), worker.log_text()
        yield worker
    finally:
        worker.stop()


@pytest.fixture(scope="session")
def asgi_server(subprocess_env):
    """The case service under daphne (HTTP + WebSocket), against the test database and Redis."""
    server, base = start_ready_asgi_server(
        name="case-asgi",
        application="casemgmt.config.asgi:application",
        env=subprocess_env,
        health_path="/healthz",
    )
    try:
        yield base
    finally:
        server.stop()


@pytest.fixture(scope="session")
def production_web(subprocess_env):
    """The case service started by deploy/Procfile's case-web command (uvicorn, its workers and
    flags; only the port differs), against the test database and Redis."""
    server, base = start_procfile_server("case-web", env=subprocess_env, health_path="/healthz")
    try:
        yield base
    finally:
        server.stop()
