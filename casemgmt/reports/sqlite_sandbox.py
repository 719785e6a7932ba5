"""Runs a checked report query on SQLite (the embedded default) with walls of its own, the
counterparts of PostgreSQL's role, views, read-only transaction and statement timeout:

- a separate connection opened read-only (`mode=ro`) with `query_only` on and no attached
  databases allowed, so nothing can be written or attached whatever the SQL says;
- temporary views `cases` and `tasks` over views whose names are random per run and which filter
  on the caller's tenant and, for a caller outside a case type's `accessTeams`, leave out that
  type's cases and their tasks (PostgreSQL's `team_access` policy), both written into their
  definition (validated UUIDs, never caller text);
- an authorizer that allows only SELECT, reading those views, reading the base tables *from inside
  the random-named views* (a query cannot name them, so a CTE called `cases` reading
  `cases_case` is refused), the functions on an allow list and recursion (rows made up are bounded
  by the time limit); everything else, `sqlite_master`, PRAGMA, ATTACH, table-valued functions,
  `load_extension`, any write, is denied;
- a progress handler that stops the query at the same time limit as PostgreSQL's
  statement_timeout (400 query_timeout).

The connection is closed at the end of the call, so its temporary views die with it.
"""

from __future__ import annotations

import json
import logging
import secrets
import sqlite3
import time
import uuid
from collections.abc import Callable
from datetime import UTC
from pathlib import Path
from typing import Any

import sqlglot
from django.conf import settings
from django.db import connection
from django.utils import timezone
from sqlglot import exp
from sqlglot.errors import SqlglotError

from casemgmt.reports import sqlite_functions as fn
from casemgmt.reports.results import QueryResult, json_value, timeout_error, unique_names
from casemgmt.reports.sqlcheck import VIEWS, refuse
from casemgmt.reports.sqlite_translate import translate
from shared.api.errors import ApplicationError, NotConfigured, ValidationFailed

logger = logging.getLogger(__name__)

BASE_TABLES = {"cases": "cases_case", "tasks": "workflows_casestep"}
# The other table each hidden view reads: case types' keys, and the cases (accessTeams) of tasks.
VIEW_READS = {"cases": "cases_casetype", "tasks": "cases_case"}
ALLOWED_FUNCTIONS = {
    *("count", "sum", "avg", "min", "max", "coalesce", "nullif", "lower", "upper", "length"),
    *("trim", "substr", "substring", "replace", "round", "abs", "floor", "ceil", "ceiling"),
    *("strftime", "date", "julianday", "group_concat", "json_group_array", "json", "json_extract"),
    *("row_number", "rank", "dense_rank", "like", "iif", "->", "->>", "instr"),
    *fn.SCALARS,
    *fn.AGGREGATES,
}
PROGRESS_STEPS = 1000  # virtual machine steps between two looks at the clock


def _uuid_text(column: str) -> str:
    # Django keeps UUIDs as 32 hex digits on SQLite; the views give the dashed form PostgreSQL has.
    parts = ((1, 8), (9, 4), (13, 4), (17, 4), (21, 12))
    return " || '-' || ".join(f"substr({column}, {start}, {n})" for start, n in parts)


def _ts_text(column: str) -> str:
    # Django writes the fraction only when it is not zero; always writing it keeps text order
    # the order in time.
    return f"CASE WHEN length({column}) = 19 THEN {column} || '.000000' ELSE {column} END"


COLUMNS = {
    "cases": {
        "id": _uuid_text("c.id"),
        "case_number": "c.case_number",
        "display_name": "c.display_name",
        "case_type": "t.key",
        "case_type_version": "t.version",
        "status": "c.status",
        "data": "c.data",
        "outcome": "c.outcome",
        "created_by": _uuid_text("c.created_by_id"),
        **{name: _ts_text(f"c.{name}") for name in ("created_at", "updated_at", "sla_deadline", "closed_at")},
    },
    "tasks": {
        "id": "s.id",
        "case_id": _uuid_text("s.case_id"),
        **{name: f"s.{name}" for name in ("step_id", "name", "status", "role")},
        "assigned_to": _uuid_text("s.assigned_to_id"),
        **{name: _ts_text(f"s.{name}") for name in ("claimed_at", "due_at", "activated_at", "completed_at")},
        "completed_by": _uuid_text("s.completed_by_id"),
        "outcome": "s.outcome",
        "escalated": "s.escalated",
        "escalated_at": _ts_text("s.escalated_at"),
    },
}
SOURCES = {
    "cases": "FROM main.cases_case c JOIN main.cases_casetype t ON t.id = c.case_type_id"
    " WHERE c.tenant_id = '{tenant}'",
    "tasks": "FROM main.workflows_casestep s WHERE s.is_task AND s.tenant_id = '{tenant}'",
}
# Appended to a source when the caller does not see every team's cases.
TEAM_RULES = {
    "cases": " AND {visible}",
    "tasks": " AND s.case_id IN (SELECT c.id FROM main.cases_case c WHERE {visible})",
}


def _visible(teams: str) -> str:
    """accessTeams as SQL over `c.access_teams` (the type's team ids, comma-separated; "" = open)
    for a caller with team ids `teams` (`User.rls_teams`), as the selectors' `teams_q`."""
    ids = [str(uuid.UUID(team)) for team in teams.split(",") if team]  # validated: written into SQL
    return (
        "(" + " OR ".join(["c.access_teams = ''", *(f"instr(c.access_teams, '{i}') > 0" for i in ids)]) + ")"
    )


def _source(view: str, tenant: str, teams: str) -> str:
    source = SOURCES[view].format(tenant=tenant)
    return source if teams == "*" else source + TEAM_RULES[view].format(visible=_visible(teams))


def run_readonly(*, tenant_id: Any, sql: str, teams: str = "*") -> QueryResult:
    """`sql` must come from `sqlcheck.check_query`; it is translated to SQLite's dialect here."""
    try:
        translated = translate(sql, now=timezone.now())
    except ApplicationError:
        raise
    except Exception as exc:  # noqa: BLE001 - what could not be translated never runs
        raise refuse(f"it could not be translated for SQLite ({exc.__class__.__name__})") from None
    return execute(
        tenant_id=tenant_id, teams=teams, sql=translated.sql, names=translated.names, kinds=translated.kinds
    )


def execute(
    *,
    tenant_id: Any,
    sql: str,
    teams: str = "*",
    names: list[str] | None = None,
    kinds: list[str | None] | None = None,
) -> QueryResult:
    """Runs SQLite SQL as it is inside the walls; the walls, not the text, decide what it reaches.
    `teams` is the caller's `User.rls_teams` ("*": every team's cases)."""
    tenant = uuid.UUID(str(tenant_id)).hex  # validated: it is written into the views' SQL
    walls = _Walls(ctes=_cte_names(sql))
    db = _open()
    try:
        _prepare(db, tenant, teams, walls)
        cap = settings.REPORTS_ROW_CAP
        walls.start(settings.REPORTS_STATEMENT_TIMEOUT_MS / 1000)
        cursor = db.execute(sql)
        raw = cursor.fetchmany(cap + 1)
        names = names or [column[0] for column in cursor.description]
    except sqlite3.Error as exc:
        raise walls.error(exc) from None
    finally:
        db.close()
    kinds = kinds or [None] * len(names)
    rows = [
        dict(zip(unique_names(names), (_value(v, k) for v, k in zip(row, kinds, strict=True)), strict=True))
        for row in raw[:cap]
    ]
    return QueryResult(rows=rows, truncated=len(raw) > cap)


def _cte_names(sql: str) -> set[str]:
    try:
        return {cte.alias_or_name for cte in sqlglot.parse_one(sql, read="sqlite").find_all(exp.CTE)}
    except SqlglotError:
        return set()


def _open() -> sqlite3.Connection:
    name = str(connection.settings_dict["NAME"] or "")
    if not name or name == ":memory:" or "mode=memory" in name:
        raise NotConfigured("Report queries need an SQLite database file.", code="not_configured")
    uri = f"{Path(name).resolve().as_uri()}?mode=ro"
    return sqlite3.connect(uri, uri=True, isolation_level=None, timeout=5)


def _prepare(db: sqlite3.Connection, tenant: str, teams: str, walls: _Walls) -> None:
    for name, (scalar, arity) in fn.SCALARS.items():
        db.create_function(name, arity, walls.reporting(scalar), deterministic=True)
    for name, (aggregate, arity) in fn.AGGREGATES.items():
        db.create_aggregate(name, arity, aggregate)
    db.execute("PRAGMA case_sensitive_like = ON")  # LIKE tells cases apart, as in PostgreSQL
    for view, columns in COLUMNS.items():
        select = ", ".join(f"{sql} AS {column}" for column, sql in columns.items())
        db.execute(
            f'CREATE TEMP VIEW "{walls.hidden[view]}" AS SELECT {select} {_source(view, tenant, teams)}'
        )
        db.execute(
            f'CREATE TEMP VIEW {view} AS SELECT {", ".join(VIEWS[view])} FROM temp."{walls.hidden[view]}"'  # noqa: S608 - view and column names from code
        )
    db.execute("PRAGMA query_only = ON")
    db.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    db.set_authorizer(walls.authorize)
    db.set_progress_handler(walls.progress, PROGRESS_STEPS)


class _Walls:
    """The authorizer and the clock of one run, and what they stopped (for the error)."""

    def __init__(self, ctes: set[str]) -> None:
        self.ctes = ctes
        prefix = f"r_{secrets.token_hex(12)}"
        self.hidden = {view: f"{prefix}_{view}" for view in VIEWS}
        self.deadline = float("inf")
        self.timed_out = False
        self.denied: str | None = None
        self.function_error: str | None = None

    def start(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def progress(self) -> int:
        self.timed_out = time.monotonic() > self.deadline
        return 1 if self.timed_out else 0  # non-zero interrupts the statement

    def authorize(
        self, action: int, arg1: str | None, arg2: str | None, db: str | None, source: str | None
    ) -> int:
        if self._allowed(action, arg1, arg2, db, source):
            return sqlite3.SQLITE_OK
        self.denied = self.denied or _describe(action, arg1, arg2)
        return sqlite3.SQLITE_DENY

    def _allowed(
        self, action: int, arg1: str | None, arg2: str | None, db: str | None, source: str | None
    ) -> bool:
        if action in (sqlite3.SQLITE_SELECT, sqlite3.SQLITE_RECURSIVE):
            return True
        if action == sqlite3.SQLITE_FUNCTION:
            return (arg2 or "").lower() in ALLOWED_FUNCTIONS
        if action != sqlite3.SQLITE_READ:
            return False
        if db == "temp" and (arg1 in VIEWS or arg1 in self.hidden.values()):
            return True
        if db is None and arg2 == "" and arg1 in self.ctes:
            # A recursive CTE reading its own rows. Eponymous virtual tables (pragma_*) read the
            # same way, but they are denied again as PRAGMA, and a name the statement gives a CTE
            # means that CTE where it is visible.
            return True
        # The base tables only through the views this run made: SQLite names the innermost view
        # (or CTE) a read comes from, and no query can know or name these.
        return db == "main" and any(
            arg1 in (BASE_TABLES[view], VIEW_READS[view]) for view in VIEWS if source == self.hidden[view]
        )

    def reporting(self, function: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            try:
                return function(*args)
            except (ValueError, TypeError, OverflowError) as exc:
                self.function_error = str(exc)
                raise

        return call

    def error(self, exc: sqlite3.Error) -> ApplicationError:
        if self.timed_out:
            return timeout_error()
        if self.denied:
            # The checker lets through only what these walls allow; a denial means it missed
            # something, which is worth a look.
            logger.warning("report query denied by the SQLite authorizer: %s", self.denied)
            return refuse(f"the database does not allow {self.denied}")
        message = self.function_error or str(exc).strip().splitlines()[0][:300]
        return ValidationFailed(f"The query failed: {message}", field="query", code="query_failed")


# The authorizer's action codes by name (sqlite3's other SQLITE_ constants reuse the same numbers).
ACTION_NAMES = (
    "CREATE_INDEX CREATE_TABLE CREATE_TEMP_INDEX CREATE_TEMP_TABLE CREATE_TEMP_TRIGGER CREATE_TEMP_VIEW"
    " CREATE_TRIGGER CREATE_VIEW DELETE DROP_INDEX DROP_TABLE DROP_TEMP_INDEX DROP_TEMP_TABLE"
    " DROP_TEMP_TRIGGER DROP_TEMP_VIEW DROP_TRIGGER DROP_VIEW INSERT PRAGMA READ SELECT TRANSACTION"
    " UPDATE ATTACH DETACH ALTER_TABLE REINDEX ANALYZE CREATE_VTABLE DROP_VTABLE FUNCTION SAVEPOINT"
    " RECURSIVE"
).split()
ACTIONS = {
    getattr(sqlite3, f"SQLITE_{name}"): name.lower()
    for name in ACTION_NAMES
    if hasattr(sqlite3, f"SQLITE_{name}")
}


def _describe(action: int, arg1: str | None, arg2: str | None) -> str:
    if action == sqlite3.SQLITE_READ:
        return f"reading {arg1}.{arg2}"
    if action == sqlite3.SQLITE_FUNCTION:
        return f"the function {arg2}()"
    return " ".join(x for x in (ACTIONS.get(action, str(action)), arg1, arg2) if x)


def _value(value: Any, kind: str | None) -> Any:
    if value is None:
        return None
    if kind == "ts" and isinstance(value, str):
        moment = fn.parse_ts(value)
        return json_value(moment.replace(tzinfo=UTC)) if moment else None
    if kind in ("json", "array") and isinstance(value, str):
        return json.loads(value)
    if kind == "bool" and isinstance(value, int):
        return bool(value)
    if kind == "numeric" and isinstance(value, float) and value.is_integer():
        return int(value)
    return json_value(value)
