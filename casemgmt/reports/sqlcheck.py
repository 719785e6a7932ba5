"""The checker every report query passes before it runs: one read-only SELECT over the views
`cases` and `tasks`, their columns, and a short list of harmless functions.

The checker works on sqlglot's syntax tree and the text that runs is generated back from that tree
(without comments), so PostgreSQL executes exactly what was checked. The database adds its own
walls behind this one (read-only transaction, a role that can only read the two views, views
filtered by the tenant setting), so a gap here is not a leak by itself.
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError, ParseError, SqlglotError, TokenError
from sqlglot.optimizer.qualify import qualify

from shared.api.errors import ValidationFailed

MAX_QUERY_CHARS = 20_000

# The columns of the views the migration creates (PostgreSQL types). A test compares them with the
# database so the two cannot drift apart.
VIEWS: dict[str, dict[str, str]] = {
    "cases": {
        "id": "uuid",
        "case_number": "text",
        "display_name": "text",
        "case_type": "text",
        "case_type_version": "integer",
        "status": "text",
        "data": "jsonb",
        "outcome": "text",
        "created_by": "uuid",
        "created_at": "timestamptz",
        "updated_at": "timestamptz",
        "sla_deadline": "timestamptz",
        "closed_at": "timestamptz",
    },
    "tasks": {
        "id": "bigint",
        "case_id": "uuid",
        "step_id": "text",
        "name": "text",
        "status": "text",
        "role": "text",
        "assigned_to": "uuid",
        "claimed_at": "timestamptz",
        "due_at": "timestamptz",
        "activated_at": "timestamptz",
        "completed_at": "timestamptz",
        "completed_by": "uuid",
        "outcome": "text",
        "escalated": "boolean",
        "escalated_at": "timestamptz",
    },
}

# Functions a query may call, written as calls: a function is allowed when it parses to the same
# kind of node as one of these. Nothing here sleeps, reads files or settings, writes, loops over
# rows it makes up (no set-returning functions) or reaches another database.
ALLOWED_CALLS = [
    "count(x)",
    "sum(x)",
    "avg(x)",
    "min(x)",
    "max(x)",
    "stddev(x)",
    "coalesce(x, y)",
    "nullif(x, y)",
    "greatest(x, y)",
    "least(x, y)",
    "lower(x)",
    "upper(x)",
    "length(x)",
    "trim(x)",
    "substring(x from 1 for 2)",
    "concat(x, y)",
    "replace(x, y, z)",
    "round(x, 2)",
    "abs(x)",
    "floor(x)",
    "ceil(x)",
    "date_trunc('day', x)",
    "extract(epoch from x)",
    "date_part('day', x)",
    "age(x, y)",
    "to_char(x, 'YYYY-MM')",
    "now()",
    "current_date",
    "current_timestamp",
    "string_agg(x, ',')",
    "array_agg(x)",
    "bool_and(x)",
    "bool_or(x)",
    "row_number() over ()",
    "rank() over ()",
    "dense_rank() over ()",
    "percentile_cont(0.5) within group (order by x)",
    "jsonb_typeof(x)",
]

# Other syntax a SELECT may use. Everything absent is refused: writes (INSERT, UPDATE, DELETE,
# MERGE, COPY, SELECT INTO), DDL, locking clauses, placeholders, casts to object identifiers
# (regclass...), VALUES lists, LATERAL and table functions.
ALLOWED_NODES: tuple[type[exp.Expression], ...] = (
    exp.Select,
    exp.Union,
    exp.Except,
    exp.Intersect,
    exp.With,
    exp.CTE,
    exp.From,
    exp.Join,
    exp.Table,
    exp.TableAlias,
    exp.Subquery,
    exp.Identifier,
    exp.Column,
    exp.Star,
    exp.Alias,
    exp.Where,
    exp.Group,
    exp.Having,
    exp.Order,
    exp.Ordered,
    exp.Limit,
    exp.Offset,
    exp.Distinct,
    exp.Literal,
    exp.Boolean,
    exp.Null,
    exp.Paren,
    exp.Tuple,
    exp.And,
    exp.Or,
    exp.Not,
    exp.EQ,
    exp.NEQ,
    exp.GT,
    exp.GTE,
    exp.LT,
    exp.LTE,
    exp.Is,
    exp.In,
    exp.Between,
    exp.Like,
    exp.ILike,
    exp.Exists,
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.Div,
    exp.Mod,
    exp.Neg,
    exp.DPipe,
    exp.Case,
    exp.If,
    exp.Cast,
    exp.DataType,
    exp.Interval,
    exp.Var,
    exp.Filter,
    exp.Window,
    exp.WithinGroup,
    exp.JSONExtract,
    exp.JSONExtractScalar,
    exp.JSONPath,
    exp.JSONPathKey,
    exp.JSONPathRoot,
    exp.JSONPathSubscript,
)

ALLOWED_TYPES = {
    exp.DataType.Type.BIGINT,
    exp.DataType.Type.INT,
    exp.DataType.Type.SMALLINT,
    exp.DataType.Type.DECIMAL,
    exp.DataType.Type.DOUBLE,
    exp.DataType.Type.FLOAT,
    exp.DataType.Type.TEXT,
    exp.DataType.Type.VARCHAR,
    exp.DataType.Type.CHAR,
    exp.DataType.Type.BOOLEAN,
    exp.DataType.Type.DATE,
    exp.DataType.Type.TIMESTAMP,
    exp.DataType.Type.TIMESTAMPTZ,
    exp.DataType.Type.INTERVAL,
    exp.DataType.Type.UUID,
    exp.DataType.Type.JSON,
    exp.DataType.Type.JSONB,
}


def _allowed_functions() -> tuple[set[type[exp.Func]], set[str]]:
    kinds: set[type[exp.Func]] = set()
    anonymous: set[str] = set()
    for call in ALLOWED_CALLS:
        node = sqlglot.parse_one(f"SELECT {call}", read="postgres").expressions[0]
        while isinstance(node, exp.Window | exp.WithinGroup):
            node = node.this
        if isinstance(node, exp.Anonymous):
            anonymous.add(node.name.lower())
        else:
            kinds.add(type(node))
    return kinds, anonymous


FUNCTION_KINDS, FUNCTION_NAMES = _allowed_functions()


def refuse(reason: str) -> ValidationFailed:
    # A refusal is an ordinary 400 validation_error; the reason is in the message and details.
    return ValidationFailed(f"Query refused: {reason}", field="query")


def check_query(sql: str) -> str:
    """The SQL text to run for `sql`, or a 400 `validation_error` saying why it may not run."""
    if not isinstance(sql, str) or not sql.strip():
        raise refuse("the query is empty")
    if len(sql) > MAX_QUERY_CHARS:
        raise refuse(f"the query is longer than {MAX_QUERY_CHARS} characters")
    try:
        tree = _parse_one(sql)
        for node in tree.walk():
            _check_node(node)
        _check_columns(tree)
        return tree.sql(dialect="postgres", comments=False)
    except ValidationFailed:
        raise
    except Exception as exc:  # noqa: BLE001 - sqlglot can trip over odd input; what was not checked never runs
        raise refuse(f"it could not be checked ({exc.__class__.__name__})") from None


def _parse_one(sql: str) -> exp.Expression:
    try:
        statements = [s for s in sqlglot.parse(sql, read="postgres") if s is not None]
    except (ParseError, TokenError) as exc:
        raise refuse(f"it does not parse: {_first_line(exc)}") from None
    if len(statements) != 1:
        raise refuse(f"exactly one statement is allowed, found {len(statements)}")
    tree = statements[0]
    if not isinstance(tree, exp.Select | exp.Union | exp.Except | exp.Intersect):
        raise refuse(f"only SELECT is allowed, not {tree.key.upper()}")
    return tree


def _check_node(node: exp.Expr) -> None:
    if isinstance(node, ALLOWED_NODES):
        if isinstance(node, exp.DataType) and node.this not in ALLOWED_TYPES:
            raise refuse(f"casts to {node.sql(dialect='postgres')} are not allowed")
        if isinstance(node, exp.Table):
            _check_table(node)
        if isinstance(node, exp.With) and node.args.get("recursive"):
            # A recursive CTE makes up rows without bound; reports only read existing ones.
            raise refuse("WITH RECURSIVE is not allowed")
        if isinstance(node, exp.Column) and (node.args.get("db") or node.args.get("catalog")):
            raise refuse(f"column {node.sql(dialect='postgres')} names a schema; only the views may be read")
    elif isinstance(node, exp.Func):
        _check_function(node)
    else:
        raise refuse(f"{_describe(node)} is not allowed")


def _check_function(node: exp.Func) -> None:
    if isinstance(node, exp.Anonymous):
        if node.name.lower() not in FUNCTION_NAMES:
            raise refuse(f"function {node.name.lower()}() is not allowed")
    elif type(node) not in FUNCTION_KINDS:
        raise refuse(f"function {node.sql_name().lower()}() is not allowed")


def _check_table(table: exp.Table) -> None:
    if not isinstance(table.this, exp.Identifier):
        raise refuse(f"{_describe(table.this)} in FROM is not allowed; read the views cases and tasks")
    name = _identifier(table.this)
    if table.args.get("db") or table.args.get("catalog"):
        raise refuse(
            f"{table.sql(dialect='postgres')} names a schema; only the views cases and tasks may be read"
        )
    if name in visible_ctes(table):
        return
    if name not in VIEWS:
        raise refuse(f"table {name} is not allowed; only the views cases and tasks may be read")


def visible_ctes(table: exp.Table) -> set[str]:
    """The names of the common table expressions `table` may refer to, following PostgreSQL: a
    WITH list's names are visible in the query body and each CTE sees only the CTEs before it (a
    later or its own name means a real table of that name). WITH RECURSIVE is refused."""
    names: set[str] = set()
    child: exp.Expr = table
    parent = table.parent
    while parent is not None:
        with_ = parent.args.get("with_") if isinstance(parent, exp.Query) else None
        if isinstance(with_, exp.With) and child is not with_:
            names.update(_identifier(cte.args["alias"].this) for cte in with_.expressions)
        elif isinstance(parent, exp.With):
            ctes = parent.expressions
            names.update(_identifier(cte.args["alias"].this) for cte in ctes[: ctes.index(child)])
        child, parent = parent, parent.parent
    return names


def _check_columns(tree: exp.Expression) -> None:
    """Every column must be one of the views' (or a name the query itself defines)."""
    try:
        schema: dict[str, object] = {**VIEWS}
        qualify(tree.copy(), schema=schema, dialect="postgres", validate_qualify_columns=True)
    except OptimizeError as exc:
        raise refuse(_first_line(exc)) from None
    except SqlglotError as exc:
        raise refuse(f"it could not be checked: {_first_line(exc)}") from None


def _identifier(node: exp.Identifier) -> str:
    # PostgreSQL folds unquoted names to lower case; quoted names are taken as written.
    return node.this if node.quoted else node.this.lower()


def _describe(node: exp.Expr) -> str:
    text = node.sql(dialect="postgres", comments=False)
    return f"{node.key.upper()} ({text[:60]})" if text else node.key.upper()


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0][:300] if str(exc).strip() else exc.__class__.__name__


def schema_lines(views: Iterable[str] = VIEWS) -> list[str]:
    """The views' schema as one line per view, for the language model's prompt."""
    return [f"{view}({', '.join(f'{c} {t}' for c, t in VIEWS[view].items())})" for view in views]
