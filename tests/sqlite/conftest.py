"""The embedded default's database paths, on SQLite (`tests/run.py case-sqlite` / `orch-sqlite`,
with the services' `test_sqlite` settings). Under any other database these tests are skipped: what
they cover is the code that runs only when `connection.vendor` is not PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if settings.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
        return
    skip = pytest.mark.skip(reason="SQLite paths: run with the services' test_sqlite settings")
    for item in items:
        if "tests/sqlite/" in str(item.path).replace("\\", "/"):
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _empty_broker_folder() -> None:
    """Wakeups left by an earlier session must not reach this session's agents or counts."""
    options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        for message in Path(options["data_folder_in"]).glob("*.msg"):
            message.unlink(missing_ok=True)


@pytest.fixture(scope="session", autouse=True)
def _metrics_registered(django_db_setup, django_db_blocker) -> None:
    """One request before any race: the metrics middleware registers its collectors on first use,
    and two threads doing that at once collide in the registry."""
    from django.test import Client

    with django_db_blocker.unblock():
        Client().get("/no-such-route")
