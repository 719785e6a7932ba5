"""Statements a process runs over and over, prepared once per database connection (PostgreSQL).

Django sends every statement as text with its values inlined (psycopg's client-side binding), so
PostgreSQL parses and plans it anew each time. For a short statement that is run thousands of
times, such as an orchestrator agent's claim, planning costs several times the execution (0.26 ms
against 0.04 ms). A cursor from `prepared_cursor()` sends the values as parameters and has psycopg
prepare the statement on the connection the first time it runs there; later runs skip parsing and
planning.

The statement's text must then type what PostgreSQL cannot infer: a parameter inside
`jsonb_build_object(...)` is written `%(name)s::text`. The cursor is Django's wrapper (execute
wrappers run, errors are Django's). `DB_PREPARED_STATEMENTS = False` (a connection pooler in
transaction mode that does not keep prepared statements) gives a plain Django cursor instead;
so do other databases.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from django.conf import settings
from django.db import connection
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper

# Django turns psycopg's automatic preparing off (`prepare_threshold = None`), which also refuses
# explicit requests; a threshold no statement reaches keeps automatic preparing off and honours
# `prepare=True`.
EXPLICIT_ONLY = 2**62


class PreparingCursor(psycopg.Cursor):
    """Server-side parameters, every statement prepared on its connection."""

    def execute(self, query, params=None, *, prepare=None, binary=None):
        return super().execute(query, params, prepare=True, binary=binary)


class _LoggedCursor(CursorDebugWrapper):
    """Django's debug cursor, logging the statement as sent: its values travel as parameters, so
    there is no text with them inlined to log (Django's debug cursor would log nothing)."""

    def execute(self, sql: Any, params: Any = None) -> Any:
        with self.debug_sql(sql, params):
            return CursorWrapper.execute(self, sql, params)


@contextmanager
def prepared_cursor() -> Iterator[Any]:
    if connection.vendor != "postgresql" or not getattr(settings, "DB_PREPARED_STATEMENTS", True):
        with connection.cursor() as cursor:
            yield cursor
        return
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    raw = connection.connection
    if raw.prepare_threshold is None:
        raw.prepare_threshold = EXPLICIT_ONLY
    connection.validate_thread_sharing()
    with connection.wrap_database_errors:
        # As Django's own cursors: the debug wrapper where queries are logged (DEBUG, tests'
        # CaptureQueriesContext), so prepared statements are seen and counted like any other.
        # The stubs type the argument as Django's wrapper; it takes the driver's cursor.
        driver_cursor: Any = PreparingCursor(raw)
        if connection.queries_logged:
            cursor = _LoggedCursor(driver_cursor, connection)
        else:
            cursor = connection.make_cursor(driver_cursor)
    try:
        yield cursor
    finally:
        cursor.close()
