"""The query checker on its own: what it refuses, with which reason, and what it lets through."""

from __future__ import annotations

import pytest
from django.db import connection

from casemgmt.reports.sqlcheck import VIEWS, check_query
from shared.api.errors import ValidationFailed

REFUSED = [
    # writes and other statements
    ("INSERT INTO cases (id) VALUES (gen_random_uuid())", "only SELECT"),
    ("UPDATE cases SET status = 'closed'", "only SELECT"),
    ("DELETE FROM cases", "only SELECT"),
    ("DROP TABLE cases_case", "only SELECT"),
    ("TRUNCATE cases_case", "only SELECT"),
    ("COPY cases_case TO '/tmp/x'", "only SELECT"),
    ("COPY (SELECT * FROM cases) TO STDOUT", "only SELECT"),
    ("CREATE TABLE x AS SELECT * FROM cases", "only SELECT"),
    ("SET app.tenant_id = '00000000-0000-0000-0000-000000000000'", "only SELECT"),
    ("EXPLAIN ANALYZE SELECT * FROM cases", "only SELECT"),
    ("VALUES (1)", "only SELECT"),
    ("SELECT * INTO stolen FROM cases", "INTO"),
    ("SELECT * FROM cases FOR UPDATE", "LOCK"),
    ("WITH gone AS (DELETE FROM cases RETURNING *) SELECT * FROM gone", "DELETE"),
    ("WITH x AS (UPDATE cases SET status = 'x' RETURNING id) SELECT 1", "UPDATE"),
    ("WITH x AS (INSERT INTO cases (id) VALUES (NULL) RETURNING id) SELECT 1", "INSERT"),
    # statement smuggling
    ("SELECT 1; DROP TABLE cases_case", "exactly one statement"),
    ("SELECT 1; SELECT 2", "exactly one statement"),
    ("SELECT 1 /* ; */; DELETE FROM cases", "exactly one statement"),
    ("SELECT 'a'; COMMIT; DROP TABLE x", "exactly one statement"),
    ("", "empty"),
    ("   ", "empty"),
    ("SELECT * FROM", "does not parse"),
    # catalogs, raw tables and schemas
    ("SELECT * FROM pg_catalog.pg_authid", "names a schema"),
    ("SELECT * FROM pg_class", "table pg_class is not allowed"),
    ("SELECT * FROM pg_roles", "table pg_roles is not allowed"),
    ("SELECT * FROM information_schema.tables", "names a schema"),
    ("SELECT * FROM cases_case", "table cases_case is not allowed"),
    ("SELECT * FROM public.cases_case", "names a schema"),
    ("SELECT * FROM reporting.cases", "names a schema"),
    ("SELECT id FROM cases UNION SELECT id FROM cases_case", "table cases_case is not allowed"),
    ("SELECT * FROM cases WHERE id IN (SELECT id FROM cases_case)", "table cases_case is not allowed"),
    ("SELECT * FROM accounts_user", "table accounts_user is not allowed"),
    ('SELECT * FROM "CASES"', "table CASES is not allowed"),
    # a CTE name does not open a real table of the same name
    ("WITH a AS (SELECT * FROM pg_roles), pg_roles AS (SELECT 1 AS x) SELECT * FROM a", "pg_roles"),
    ("WITH a AS (SELECT * FROM cases_case), cases_case AS (SELECT 1 AS id) SELECT * FROM a", "cases_case"),
    (
        "SELECT * FROM (WITH cases_case AS (SELECT 1 AS id) SELECT * FROM cases_case) s, cases_case",
        "cases_case",
    ),
    ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r", "RECURSIVE"),
    # columns outside the views
    ("SELECT tenant_id FROM cases", "tenant_id"),
    ("SELECT * FROM cases WHERE tenant_id IS NOT NULL", "tenant_id"),
    ("SELECT xmin FROM cases", "xmin"),
    ("SELECT search_text FROM cases", "search_text"),
    # functions outside the allow list
    ("SELECT pg_sleep(10)", "pg_sleep"),
    ("SELECT count(*) FROM cases WHERE pg_sleep(1) IS NULL", "pg_sleep"),
    ("SELECT * FROM dblink('host=evil', 'SELECT 1') AS t(x int)", "not allowed"),
    ("SELECT lo_import('/etc/passwd')", "lo_import"),
    ("SELECT pg_read_file('/etc/passwd')", "pg_read_file"),
    ("SELECT set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', true)", "set_config"),
    ("SELECT current_setting('app.tenant_id')", "current_setting"),
    ("SELECT generate_series(1, 1000000000)", "not allowed"),
    ("SELECT * FROM generate_series(1, 10)", "not allowed"),
    ("SELECT txid_current()", "txid_current"),
    ("SELECT version()", "not allowed"),
    ("SELECT nextval('cases_casecounter_id_seq')", "nextval"),
    ("SELECT 'cases_case'::regclass", "REGCLASS"),
    ("SELECT $1", "PARAMETER"),
    ("SELECT * FROM cases, LATERAL (SELECT 1) x", "LATERAL"),
]


@pytest.mark.parametrize(("sql", "reason"), REFUSED)
def test_refused_with_reason(sql, reason):
    with pytest.raises(ValidationFailed) as caught:
        check_query(sql)
    assert caught.value.code == "validation_error"
    assert reason in caught.value.message, caught.value.message


ALLOWED = [
    "SELECT status, count(*) AS n FROM cases GROUP BY status ORDER BY n DESC",
    "SELECT c.case_number, t.name FROM cases c JOIN tasks t ON t.case_id = c.id WHERE t.status = 'active'",
    "SELECT case_type, avg(extract(epoch FROM closed_at - created_at)) FROM cases WHERE status = 'closed' GROUP BY 1",
    "SELECT date_trunc('week', created_at) AS week, count(*) FROM cases GROUP BY week ORDER BY week",
    "SELECT (data->>'amount')::numeric AS amount FROM cases WHERE data->>'title' ILIKE '%claim%'",
    "WITH open AS (SELECT id FROM cases WHERE status = 'active') SELECT count(*) FROM open",
    "WITH a AS (SELECT id FROM cases), b AS (SELECT id FROM a) SELECT count(*) FROM b",
    "SELECT id FROM cases UNION SELECT case_id FROM tasks",
    "SELECT count(*) FILTER (WHERE sla_deadline < now()) FROM cases",
    "SELECT row_number() OVER (ORDER BY created_at), case_number FROM cases LIMIT 5",
    "SELECT * FROM (SELECT * FROM cases) s WHERE s.id IN (SELECT case_id FROM tasks)",
    "SELECT 1;",
]


@pytest.mark.parametrize("sql", ALLOWED)
def test_allowed(sql):
    assert check_query(sql).upper().startswith(("SELECT", "WITH"))


def test_the_text_that_runs_is_regenerated_without_comments():
    checked = check_query("SELECT count(*) /* hidden */ FROM cases -- trailing")
    assert checked == "SELECT COUNT(*) FROM cases"


def test_the_checker_knows_the_views_exactly_as_the_database_has_them(db):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = 'reporting' ORDER BY table_name, ordinal_position"
        )
        found: dict[str, list[str]] = {}
        for table, column in cursor.fetchall():
            found.setdefault(table, []).append(column)
    assert found == {view: list(columns) for view, columns in VIEWS.items()}


def test_input_the_parser_trips_over_is_refused_not_an_error():
    # sqlglot raises an AttributeError inside for this one; it must still be a plain refusal.
    with pytest.raises(ValidationFailed) as caught:
        check_query("WITH $a AS (SELECT id FROM cases) SELECT c.id FROM a JOIN cases c ON c.id = a.id")
    assert caught.value.code == "validation_error"
