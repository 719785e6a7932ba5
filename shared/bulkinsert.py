"""Inserting (and looking up) many rows in one statement with one parameter.

Django's `bulk_create` prepares every field of every object in Python and sends one parameter per
value (on PostgreSQL, arrays for UNNEST); for ten thousand rows that is most of a second of CPU.
Here the rows go as one JSON document that PostgreSQL unpacks itself (`jsonb_populate_recordset`
into the table's own row type), so each value is only converted to JSON on the way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from typing import Any

from django.db import connection, models
from django.db.models.expressions import RawSQL


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


def bulk_insert(model: type[models.Model], objs: Sequence[models.Model]) -> None:
    """Inserts `objs` (every concrete column taken from the objects, as they are: no field
    defaults or `pre_save` are applied, so set what the rows need). Auto-increment primary keys are
    left to the database and not read back. Other databases use `bulk_create`."""
    if not objs:
        return
    if connection.vendor != "postgresql":
        model.objects.bulk_create(objs)  # type: ignore[attr-defined]
        return
    fields = _fields(model)
    rows = [{f.column: _json_value(getattr(obj, f.attname)) for f in fields} for obj in objs]
    _insert(model, fields, rows)


def bulk_insert_rows(model: type[models.Model], rows: list[dict[str, Any]]) -> None:
    """As `bulk_insert`, from dicts of column values (no model instances to build); every column
    the table needs must be given (missing ones are NULL), datetimes as ISO strings or datetimes."""
    if not rows:
        return
    if connection.vendor != "postgresql":
        model.objects.bulk_create([model(**row) for row in rows])  # type: ignore[attr-defined]
        return
    fields = _fields(model)
    _insert(model, fields, [{k: _json_value(v) for k, v in row.items()} for row in rows])


def _fields(model: type[models.Model]) -> list[models.Field]:
    return [f for f in model._meta.concrete_fields if not (f.primary_key and isinstance(f, models.AutoField))]


def _insert(model: type[models.Model], fields: list[models.Field], rows: list[dict[str, Any]]) -> None:
    table = connection.ops.quote_name(model._meta.db_table)
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    sql = f"INSERT INTO {table} ({columns}) SELECT {columns} FROM jsonb_populate_recordset(NULL::{table}, %s::jsonb)"  # noqa: S608 - quoted model identifiers; rows are a parameter
    with connection.cursor() as cursor:
        cursor.execute(sql, [json.dumps(rows, separators=(",", ":"))])


def copy_rows(model: type[models.Model], columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """PostgreSQL only: `rows` (tuples of the values of `columns`, fields' attnames, in that order; JSON columns as JSON
    text) with COPY, the cheapest way in for both sides: no statement to parse or plan and no
    parameter or document for the database to unpack, and the client's library encodes each row in
    C. Columns left out take NULL (not the fields' defaults, which are Python's)."""
    table = connection.ops.quote_name(model._meta.db_table)
    column_of = {f.attname: f.column for f in model._meta.concrete_fields}
    names = ", ".join(connection.ops.quote_name(column_of[c]) for c in columns)
    # (Django wraps the driver's errors in its own only around execute: a unique violation is an
    # IntegrityError here too)
    statement = f"COPY {table} ({names}) FROM STDIN"
    with connection.wrap_database_errors, connection.cursor() as cursor, cursor.copy(statement) as copy:
        for row in rows:
            copy.write_row(row)


def lines(values: Sequence[str], *, nullable: bool = False) -> str | None:
    """`values` joined by line breaks, for PostgreSQL's `string_to_array(%s, E'\\n')` (with
    `nullable`, `string_to_array(%s, E'\\n', '')`, which reads an empty value as NULL): one text
    parameter instead of a list, whose elements psycopg quotes one by one in Python. None when the
    values would not come back as they are: one holds a line break, or (unless `nullable`) is
    empty, or there are none (an empty text is read back as no values)."""
    joined = "\n".join(values)
    if not values or joined.count("\n") != len(values) - 1:
        return None
    if not nullable and "" in values:
        return None
    return joined


def text_array(values: Sequence[str]) -> tuple[str, Any]:
    """(SQL for a `text[]` of `values`, its one parameter): the values as `lines` when they can
    be, else the list."""
    joined = lines(values)
    return ("string_to_array(%s, E'\\n')", joined) if joined is not None else ("%s::text[]", list(values))


def among(values: Iterable[str]) -> list[str] | RawSQL:
    """The right-hand side of a `__in` lookup over many strings: on PostgreSQL one JSON parameter
    unpacked by the database (a list of ten thousand values is otherwise ten thousand parameters
    to bind), elsewhere the list itself."""
    items = list(values)
    if connection.vendor != "postgresql" or len(items) < 100:
        return items
    return RawSQL("SELECT jsonb_array_elements_text(%s::jsonb)", [json.dumps(items)])
