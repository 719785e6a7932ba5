"""Runs a checked report query with the database's own walls around it.

In one transaction that is always rolled back: READ ONLY, the tenant in the `app.tenant_id` setting
(the views filter on it; it is bound as a parameter, never pasted into SQL), a statement timeout,
`search_path` set to the reporting schema only, and the role that may read the two views and
nothing else. Rows come through a server-side cursor so at most the row cap plus one are fetched.
Because every setting is LOCAL and the transaction (or savepoint) is rolled back, nothing of it
outlives the call.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg.errors
from django.conf import settings
from django.db import DatabaseError, connection, transaction

from casemgmt.reports import sqlite_sandbox
from casemgmt.reports.results import QueryResult, json_value, timeout_error, unique_names
from shared.api.errors import ApplicationError, NotConfigured, ValidationFailed

__all__ = ["QueryResult", "run_readonly"]


def run_readonly(*, tenant_id: Any, sql: str, teams: str = "*") -> QueryResult:
    """`sql` must come from `sqlcheck.check_query`; this layer assumes nothing else about it.
    `teams` (the caller's `User.rls_teams`) hides case types' cases outside the caller's
    accessTeams on SQLite; on PostgreSQL the `team_access` policy does, by the request's
    `app.team_ids`."""
    if connection.vendor == "sqlite":
        return sqlite_sandbox.run_readonly(tenant_id=tenant_id, sql=sql, teams=teams)
    if connection.vendor != "postgresql":
        raise NotConfigured(
            f"Report queries need PostgreSQL or SQLite, not {connection.vendor}.", code="not_configured"
        )
    cap = settings.REPORTS_ROW_CAP
    try:
        with transaction.atomic():
            _enter_sandbox(tenant_id)
            columns, raw = _fetch(sql, cap + 1)
            transaction.set_rollback(True)
    except DatabaseError as exc:
        raise _query_error(exc) from None
    rows = [dict(zip(columns, (json_value(v) for v in row), strict=True)) for row in raw[:cap]]
    return QueryResult(rows=rows, truncated=len(raw) > cap)


def _enter_sandbox(tenant_id: Any) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SET TRANSACTION READ ONLY")
        # standard_conforming_strings: a backslash in a string literal is a plain character, as the
        # checker's parser read it.
        cursor.execute(
            "SELECT set_config('app.tenant_id', %s, true), set_config('statement_timeout', %s, true),"
            " set_config('search_path', 'reporting', true),"
            " set_config('standard_conforming_strings', 'on', true)",
            [str(tenant_id), str(int(settings.REPORTS_STATEMENT_TIMEOUT_MS))],
        )
        role = settings.REPORTS_DB_ROLE
        if role:
            try:
                cursor.execute(f"SET LOCAL ROLE {connection.ops.quote_name(role)}")
            except DatabaseError as exc:
                raise NotConfigured(
                    f"Report queries are not set up in this database: {_first_line(exc)}",
                    code="not_configured",
                ) from None


# The database driver hands json and jsonb values over as text (Django parses them in its fields).
JSON_TYPE_OIDS = {114, 3802}


def _fetch(sql: str, limit: int) -> tuple[list[str], list[list[Any]]]:
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql)
        raw = cursor.fetchmany(limit)
        json_columns = [
            i for i, column in enumerate(cursor.description) if column.type_code in JSON_TYPE_OIDS
        ]
        rows = [list(row) for row in raw]
        for row in rows:
            for i in json_columns:
                row[i] = json.loads(row[i]) if isinstance(row[i], str) else row[i]
        return unique_names(column.name for column in cursor.description), rows


def _query_error(exc: DatabaseError) -> ApplicationError:
    """A failed query is the caller's (400 with PostgreSQL's own first line), except a privilege
    error: a checked query reads only the views, so the role lacks its grants (a restore without
    privileges, say) and the service is what needs fixing."""
    if isinstance(exc.__cause__, psycopg.errors.InsufficientPrivilege):
        return NotConfigured(
            f"Report queries are not set up in this database: {_first_line(exc)}", code="not_configured"
        )
    if isinstance(exc.__cause__, psycopg.errors.QueryCanceled):
        return timeout_error()
    return ValidationFailed(f"The query failed: {_first_line(exc)}", field="query", code="query_failed")


def _first_line(exc: Exception) -> str:
    text = str(exc.__cause__ or exc).strip()
    return text.splitlines()[0][:300] if text else exc.__class__.__name__
