"""Transaction-scoped locks on names, for rows that do not exist yet (so `SELECT ... FOR UPDATE`
has nothing to lock)."""

from __future__ import annotations

from django.db import connection


def lock_name(name: str) -> None:
    """Holds a PostgreSQL advisory lock on `name` until the current transaction ends.

    SQLite needs none: its write transactions (started IMMEDIATE) already run one at a time."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [name])


def try_lock_name(name: str) -> bool:
    """Takes the advisory lock on `name` for the current transaction if no other transaction holds
    it; False when one does (the caller reports a conflict rather than waiting). SQLite: True."""
    if connection.vendor != "postgresql":
        return True
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 0))", [name])
        (locked,) = cursor.fetchone()
    return bool(locked)
