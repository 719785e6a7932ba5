"""A checked report query (PostgreSQL SQL) rewritten for SQLite, with the answer's column names
and value kinds as PostgreSQL would give them.

sqlglot translates the syntax; what it cannot know without types is done here from the views'
column types: timestamps are canonical UTC text (see `sqlite_functions`), so `ts - ts` becomes a
number of seconds, `ts + interval` a calendar shift, an interval literal its seconds, a string
compared with a timestamp is read as a timestamp first. PostgreSQL functions SQLite lacks call
the `report_*` functions the report connection registers. What has no faithful equivalent is
refused (400 validation_error, "Query refused: ...") rather than answered differently.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope

from casemgmt.reports.sqlcheck import VIEWS, refuse, visible_ctes
from casemgmt.reports.sqlite_functions import MONTH_SECONDS, YEAR_SECONDS, ts_text

# How a value is turned into JSON: "ts" canonical text to ISO 8601, "json" parsed, "bool" from
# 0/1, "numeric" an integral number as an integer (PostgreSQL numeric), "array" parsed JSON.
COLUMN_KINDS = {"timestamptz": "ts", "jsonb": "json", "boolean": "bool"}
CAST_KINDS = {
    exp.DataType.Type.TIMESTAMP: "ts",
    exp.DataType.Type.TIMESTAMPTZ: "ts",
    exp.DataType.Type.INTERVAL: "interval",
    exp.DataType.Type.JSON: "json",
    exp.DataType.Type.JSONB: "json",
    exp.DataType.Type.BOOLEAN: "bool",
    exp.DataType.Type.DECIMAL: "numeric",
    exp.DataType.Type.DATE: "date",
}
BOOLEAN_NODES = (exp.Predicate, exp.Connector, exp.Not, exp.Boolean, exp.LogicalAnd, exp.LogicalOr)
FIRST_ARG_KIND = (exp.Coalesce, exp.Greatest, exp.Least, exp.Nullif, exp.Max, exp.Min, exp.Sum)
COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ)
SECONDS = {"microsecond": 1e-6, "millisecond": 1e-3, "second": 1, "minute": 60, "hour": 3600}
SECONDS |= {"day": 86400, "week": 7 * 86400}
UNIT_ALIASES = {"s": "second", "sec": "second", "m": "minute", "min": "minute", "h": "hour"}
UNIT_ALIASES |= {"hr": "hour", "d": "day", "w": "week", "mon": "month", "y": "year", "yr": "year"}
PG_TYPE_NAMES = {"INT": "int4", "BIGINT": "int8", "SMALLINT": "int2", "DECIMAL": "numeric"}
PG_TYPE_NAMES |= {"DOUBLE": "float8", "FLOAT": "float4", "BOOLEAN": "bool", "VARCHAR": "varchar"}


@dataclass(frozen=True)
class Translated:
    sql: str
    names: list[str]  # as PostgreSQL names the answer's columns
    kinds: list[str | None]


def translate(sql: str, *, now: datetime) -> Translated:
    tree: Any = sqlglot.parse_one(sql, read="postgres")
    pg_names = _mark_outputs(tree)
    # Only SQL that skipped the checker fails here; the connection's authorizer judges it.
    with contextlib.suppress(SqlglotError):
        tree = qualify(tree, schema={**VIEWS}, dialect="postgres")
    kinds = _Kinds(tree)
    selects = tree.selects
    names = [pg_names.get(e.alias_or_name, e.alias_or_name) for e in selects]
    column_kinds = [kinds.of(e) for e in selects]
    plans = {id(node): plan for node in tree.walk() if (plan := _plan(node, kinds, now))}
    for node in reversed(list(tree.walk(bfs=False))):
        if id(node) in plans and (new := plans[id(node)](node)) is not node:
            node.replace(new)
    return Translated(sql=tree.sql(dialect="sqlite", comments=False), names=names, kinds=column_kinds)


class _Kinds:
    """The kind of value an expression gives, following columns into the CTE or subquery they
    come from (the annotator sqlglot has types `ts - ts` as a timestamp)."""

    def __init__(self, tree: exp.Expr) -> None:
        self.scopes = {id(scope.expression): scope for scope in traverse_scope(tree)}
        self.memo: dict[int, str | None] = {}

    def of(self, node: exp.Expr | None) -> str | None:
        if node is None:
            return None
        if id(node) not in self.memo:
            self.memo[id(node)] = self._kind(node)
        return self.memo[id(node)]

    def _kind(self, node: exp.Expr) -> str | None:  # noqa: PLR0911, C901 - one case per node kind
        if isinstance(node, exp.Alias | exp.Paren | exp.Window | exp.Filter | exp.Neg):
            return self.of(node.this)
        if isinstance(node, exp.Column):
            return self._column(node)
        if isinstance(node, exp.Cast):
            return CAST_KINDS.get(node.to.this)
        if isinstance(node, exp.Interval) or (isinstance(node, exp.Anonymous) and node.name.lower() == "age"):
            return "interval"
        if isinstance(node, exp.CurrentTimestamp | exp.TimestampTrunc):
            return "ts"
        if isinstance(node, exp.CurrentDate):
            return "date"
        if isinstance(node, exp.Sub | exp.Add):
            return _arithmetic(node, self.of(node.this), self.of(node.expression))
        if isinstance(node, exp.Mul | exp.Div):
            return "interval" if "interval" in (self.of(node.this), self.of(node.expression)) else None
        if isinstance(node, exp.JSONExtract):
            return "json"
        if isinstance(node, FIRST_ARG_KIND):
            return self.of(node.this) if self.of(node.this) != "numeric" else None
        if isinstance(node, exp.Avg):
            return "interval" if self.of(node.this) == "interval" else "numeric"
        if isinstance(node, exp.Case):
            return self.of(
                node.args["ifs"][0].args.get("true") if node.args.get("ifs") else node.args.get("default")
            )
        if isinstance(node, exp.If):
            return self.of(node.args.get("true"))
        if isinstance(node, BOOLEAN_NODES):
            return "bool"
        if isinstance(node, exp.ArrayAgg):
            return "array"
        if isinstance(node, exp.Subquery):
            query: Any = node.this
            return self.of(query.selects[0]) if query.selects else None
        return None

    def _column(self, column: exp.Column) -> str | None:
        scope = self._owner(column)
        while scope is not None:
            source = scope.sources.get(column.table)
            if isinstance(source, exp.Table):
                return COLUMN_KINDS.get(VIEWS.get(source.name, {}).get(column.name, ""))
            if isinstance(source, Scope):
                query: Any = source.expression
                match = [e for e in query.selects if e.alias_or_name == column.name]
                return self.of(match[0]) if match else None
            scope = scope.parent
        return None

    def _owner(self, node: exp.Expr) -> Scope | None:
        parent = node.parent
        while parent is not None and id(parent) not in self.scopes:
            parent = parent.parent
        return self.scopes.get(id(parent)) if parent is not None else None


def _arithmetic(node: exp.Expr, left: str | None, right: str | None) -> str | None:
    if left == right == "ts" and isinstance(node, exp.Sub):
        return "interval"
    if "ts" in (left, right) and "interval" in (left, right):
        return "ts"
    return "interval" if left == right == "interval" else None


Plan = Callable[[exp.Expr], exp.Expr]


def _plan(node: exp.Expr, kinds: _Kinds, now: datetime) -> Plan | None:  # noqa: PLR0911
    """How `node` is rewritten; decided on the original tree (kinds need it), applied children
    first, so a rewrite sees its children already translated."""
    if isinstance(node, exp.Table) and node.name in VIEWS and node.name not in visible_ctes(node):
        return _in_temp
    if isinstance(node, exp.Distinct) and node.args.get("on"):
        raise refuse("DISTINCT ON is not available on SQLite")
    if isinstance(node, exp.Sub | exp.Add):
        return _plan_arithmetic(node, kinds)
    if isinstance(node, exp.Interval):
        return _constant(_epoch(*_interval(node)))
    if isinstance(node, exp.Cast):
        return _plan_cast(node, kinds)
    if isinstance(node, exp.CurrentTimestamp):  # the run's start, one value for every row
        return _constant(exp.Literal.string(ts_text(now)))
    if isinstance(node, exp.CurrentDate):
        return _constant(exp.Literal.string(now.date().isoformat()))
    if isinstance(node, (*COMPARISONS, exp.Between, exp.In)):
        return _plan_comparison(node, kinds)
    return _plan_function(node)


def _in_temp(table: exp.Expr) -> exp.Expr:
    table.set("db", exp.to_identifier("temp"))  # `temp.cases`: a CTE of that name cannot shadow it
    return table


def _plan_function(node: exp.Expr) -> Plan | None:
    if isinstance(node, exp.TimestampTrunc):
        unit = node.args["unit"].name.lower()
        return lambda n: _call("report_date_trunc", exp.Literal.string(unit), n.this)
    if isinstance(node, exp.Extract):
        field = node.this.name.lower()
        return lambda n: _call("report_date_part", exp.Literal.string(field), n.expression)
    if isinstance(node, exp.Anonymous) and node.name.lower() in ("age", "jsonb_typeof"):
        return lambda n: _call(f"report_{n.name.lower()}", *n.expressions)
    if isinstance(node, exp.Concat):
        return lambda n: _call("report_concat", *n.expressions)
    if isinstance(node, exp.Stddev):
        return lambda n: _call("report_stddev", n.this)
    if isinstance(node, exp.ArrayAgg):
        return lambda n: _call("json_group_array", n.this)
    if isinstance(node, exp.JSONExtractScalar):
        return lambda n: _call("report_json_text", exp.JSONExtract(this=n.this, expression=n.expression))
    if isinstance(node, exp.WithinGroup):
        ordered = node.expression.expressions
        if len(ordered) != 1:
            raise refuse("percentile_cont orders by exactly one value on SQLite")
        desc = bool(ordered[0].args.get("desc"))
        return lambda n: _call(
            "report_percentile", n.expression.expressions[0].this, _fraction(n.this.this, desc)
        )
    return None


def _plan_arithmetic(node: exp.Expr, kinds: _Kinds) -> Plan | None:
    left, right = kinds.of(node.this), kinds.of(node.expression)
    if left == right == "ts" and isinstance(node, exp.Sub):
        return lambda n: _call("report_age", n.this, n.expression)  # exact to the microsecond
    if {left, right} != {"ts", "interval"} or (right == "ts" and isinstance(node, exp.Sub)):
        return None
    interval = node.expression if right == "interval" else node.this
    sign = -1 if isinstance(node, exp.Sub) else 1
    if isinstance(interval, exp.Interval):  # calendar months stay months (one month from Jan 31)
        months, seconds = _interval(interval)
        return lambda n: _call(
            "report_shift",
            _timestamp_side(n, right),
            exp.Literal.number(sign * months),
            exp.Literal.number(sign * seconds),
        )
    return lambda n: _call(
        "report_shift",
        _timestamp_side(n, right),
        exp.Literal.number(0),
        exp.Neg(this=exp.paren(n.expression))
        if sign < 0
        else (n.expression if right == "interval" else n.this),
    )


def _timestamp_side(node: exp.Expr, right_kind: str | None) -> exp.Expr:
    return node.this if right_kind == "interval" else node.expression


def _plan_cast(node: exp.Cast, kinds: _Kinds) -> Plan | None:
    to, source = node.to.this, kinds.of(node.this)
    if to in (exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPTZ):
        return (lambda n: n.this) if source == "ts" else (lambda n: _call("report_ts", n.this))
    if to == exp.DataType.Type.INTERVAL:
        if source == "interval":
            return lambda n: n.this
        if not (isinstance(node.this, exp.Literal) and node.this.is_string):
            raise refuse("on SQLite only a literal can be cast to interval")
        return _constant(_epoch(*_interval_text(node.this.this)))
    if to == exp.DataType.Type.UUID:
        return lambda n: n.this  # the views give UUIDs as their canonical text already
    if to in (exp.DataType.Type.JSON, exp.DataType.Type.JSONB):
        return lambda n: n.this if source == "json" else _call("json", n.this)
    if to == exp.DataType.Type.BOOLEAN:
        return lambda n: n.this if source == "bool" else _call("report_bool", n.this)
    return None


def _plan_comparison(node: exp.Expr, kinds: _Kinds) -> Plan | None:
    """A string compared with a timestamp is a timestamp (`created_at > '2024-05-01T00:00Z'`), as
    PostgreSQL reads it; as text it would compare in the wrong order."""
    if isinstance(node, COMPARISONS):
        sides = {"this": node.expression, "expression": node.this}
        keys = [k for k, other in sides.items() if kinds.of(other) == "ts" and _is_string(node.args[k])]
    else:
        keys = ["low", "high", "expressions"] if kinds.of(node.this) == "ts" else []
    if not keys:
        return None

    def wrap(n: exp.Expr) -> exp.Expr:
        for key in keys:
            value = n.args.get(key)
            if isinstance(value, list):
                n.set(key, [_call("report_ts", v) if _is_string(v) else v for v in value])
            elif value is not None and _is_string(value):
                n.set(key, _call("report_ts", value))
        return n

    return wrap


def _is_string(node: exp.Expr) -> bool:
    return isinstance(node, exp.Literal) and node.is_string


INTERVAL_PART = re.compile(r"\s*([-+]?\d+(?:\.\d+)?)\s*([a-z]+?)s?\b\s*", re.IGNORECASE)


def _interval(node: exp.Interval) -> tuple[int, float]:
    unit = node.args.get("unit")
    return _interval_text(f"{node.this.name} {unit.name if unit else ''}")


def _interval_text(text: str) -> tuple[int, float]:
    """(months, seconds) of an interval literal such as `1 month`, `2 hours 30 minutes`."""
    months, seconds, position = 0, 0.0, 0
    for part in INTERVAL_PART.finditer(text):
        amount, unit = float(part.group(1)), UNIT_ALIASES.get(part.group(2).lower(), part.group(2).lower())
        if part.start() != position or not (
            unit in SECONDS or unit in ("month", "year") and amount.is_integer()
        ):
            break
        position = part.end()
        if unit in SECONDS:
            seconds += amount * SECONDS[unit]
        else:
            months += int(amount) * (12 if unit == "year" else 1)
    if position != len(text) or not text.strip():
        raise refuse(f"interval '{text.strip()}' is not understood on SQLite; write e.g. '2 days 3 hours'")
    return months, seconds


def _epoch(months: int, seconds: float) -> exp.Expr:
    years, months = divmod(months, 12)
    return exp.Literal.number(years * YEAR_SECONDS + months * MONTH_SECONDS + seconds)


def _fraction(fraction: exp.Expr, desc: bool) -> exp.Expr:
    return exp.Sub(this=exp.Literal.number(1), expression=exp.paren(fraction)) if desc else fraction


def _constant(value: exp.Expr) -> Plan:
    return lambda _n: value.copy()


def _call(name: str, *args: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=list(args))


def _mark_outputs(tree: exp.Expr) -> dict[str, str]:
    """Gives every unnamed output a marker alias, and returns the name PostgreSQL would give each
    marker: qualifying names the outputs too, but by sqlglot's rules (`_col_1`)."""
    names: dict[str, str] = {}
    query = tree
    while isinstance(query, exp.SetOperation):
        query = query.this
    if not isinstance(query, exp.Select):
        return names
    for i, expression in enumerate(query.expressions):
        if isinstance(expression, exp.Alias | exp.Star) or isinstance(expression.unalias(), exp.Column):
            continue
        marker = f"report_output_{i}"
        names[marker] = _pg_name(expression)
        expression.replace(exp.alias_(expression.copy(), marker))
    return names


def _pg_name(node: exp.Expr) -> str:  # noqa: PLR0911
    """The column name PostgreSQL gives a select-list entry (its FigureColname rules)."""
    if isinstance(node, exp.Alias):
        return node.alias
    if isinstance(node, exp.Column):
        return node.name
    if isinstance(node, exp.Paren | exp.Window | exp.Filter | exp.WithinGroup):
        return _pg_name(node.this)
    if isinstance(node, exp.Cast):
        inner = _pg_name(node.this)
        to = node.to.this.value
        return inner if inner != "?column?" else PG_TYPE_NAMES.get(to, to.lower())
    if isinstance(node, exp.Subquery):
        return _pg_name(node.this.selects[0]) if node.this.selects else "?column?"
    if isinstance(node, exp.Case | exp.Exists):
        return node.key.lower()
    if isinstance(node, exp.Boolean):
        return "bool"
    if isinstance(node, exp.Binary):  # operators, `->>` included
        return "?column?"
    if isinstance(node, exp.Interval):
        return "interval"
    if isinstance(node, exp.Func):
        return node.sql(dialect="postgres").split("(")[0].strip().lower()
    return "?column?"
