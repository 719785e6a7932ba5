"""Shared by every suite: the flush that ends a transactional test is tried again after a deadlock.

Real agents and workers keep running between tests (their heartbeats, recovery sweeps and scheduler
ticks write while a test ends). The flush empties every table with one TRUNCATE, which locks the
tables in its own order, and a worker's transaction that holds one of them and reads another can
deadlock with it; PostgreSQL then aborts one side, sometimes the flush. Nothing in production
truncates tables: the flush is simply tried again (the worker's transaction has finished by then)."""

from __future__ import annotations

import pytest
from django.core.management.base import CommandError
from django.test.testcases import TransactionTestCase

from shared.web.messages import compile_all

FLUSH_TRIES = 5


def pytest_configure(config):
    """The German catalogues, compiled from their .po files as `make install` does (the pages are
    tested in both languages)."""
    compile_all()


def _deadlocked(exc: CommandError) -> bool:
    return "deadlock detected" in str(exc.__cause__ or "")


@pytest.fixture(autouse=True, scope="session")
def _flush_survives_deadlocks():
    original = TransactionTestCase._fixture_teardown

    def fixture_teardown(self):
        for attempt in range(1, FLUSH_TRIES + 1):
            try:
                return original(self)
            except CommandError as exc:
                if attempt == FLUSH_TRIES or not _deadlocked(exc):
                    raise
        return None

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(TransactionTestCase, "_fixture_teardown", fixture_teardown)
        yield
