"""The embedded default's SQLite database, as `shared.conf.database` shapes it for both services:
WAL (readers never wait for the writer), immediate transactions (a transaction takes the write lock
when it begins, so read-then-write sequences never interleave: without it, the concurrency tests
of this suite fail with "database is locked") and a busy timeout."""

import pytest
from django.db import connection


@pytest.mark.django_db
def test_sqlite_runs_in_wal_mode_with_immediate_transactions():
    assert connection.vendor == "sqlite"
    options = connection.settings_dict["OPTIONS"]
    assert options["transaction_mode"] == "IMMEDIATE" and options["timeout"] >= 5
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"
