"""Report queries on SQLite (`make run`): the tenant's rows only, the same answers as PostgreSQL,
and the walls of the report connection (read-only, authorizer, time limit) holding on their own,
without the checker in front of them.

The report connection is a second connection to the database file, so it sees committed rows
only: these tests commit (transaction=True)."""

from __future__ import annotations

import time

import pytest

from casemgmt.audit.models import AuditEvent
from casemgmt.cases.models import Case
from casemgmt.reports import sqlite_sandbox
from casemgmt.reports.sandbox import run_readonly
from casemgmt.reports.sqlcheck import VIEWS
from shared.api.errors import ValidationFailed
from tests.casemgmt.reports.conftest import analyst, lacking, other_world, outsider, world  # noqa: F401
from tests.casemgmt.reports.parity import parity_queries
from tests.casemgmt.reports.test_ask import REPLIES, ask, llm_stub, model  # noqa: F401
from tests.casemgmt.reports.test_report_queries import TRICKS, refused, run, saved

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_query_reads_only_the_callers_tenant(api, analyst, world, other_world):  # noqa: F811
    client = api(analyst)
    mine = {str(c.id) for c in world.cases}
    assert {row["id"] for row in run(client, "SELECT id FROM cases")["data"]} == mine
    tasks = run(client, "SELECT case_id FROM tasks")["data"]
    assert len(tasks) == 4 and {row["case_id"] for row in tasks} <= mine
    theirs = str(other_world.cases[0].id)
    crafted = [
        f"SELECT * FROM cases WHERE id = '{theirs}'",
        f"SELECT * FROM tasks WHERE case_id = '{theirs}'",
        f"SELECT id FROM cases WHERE id IN (SELECT id FROM cases WHERE id = '{theirs}')",
        f"SELECT id FROM cases WHERE id = '{theirs}' UNION SELECT case_id FROM tasks WHERE case_id = '{theirs}'",
        f"WITH cases AS (SELECT * FROM cases WHERE id = '{theirs}') SELECT id FROM cases",
    ]
    for query in crafted:
        assert run(client, query)["data"] == [], query
    assert run(client, "SELECT count(*) AS n FROM cases a, cases b")["data"] == [{"n": 36}]


def test_answers_match_postgresql(api, analyst, world, other_world):  # noqa: F811
    client = api(analyst)
    for query, expected in parity_queries(world):
        assert run(client, query)["data"] == expected, query


def test_the_views_have_the_columns_postgresql_has(world):  # noqa: F811
    for view in VIEWS:
        rows = run_readonly(tenant_id=world.tenant.id, sql=f"SELECT * FROM {view} LIMIT 1").rows
        assert list(rows[0]) == list(VIEWS[view]), view


def test_tricks_are_refused_as_on_postgresql(api, analyst, world):  # noqa: F811
    client = api(analyst)
    for query in TRICKS:
        body = refused(client, query)
        assert body["code"] == "validation_error" and body["details"]["field"] == "query", query
        assert body["message"].startswith("Query refused: "), body
    assert client.get("/reports").json() == []


# SQLite SQL run as it is, past the checker and the translation: only the walls stand.
PAST_THE_CHECKER = [
    "SELECT * FROM cases_case",
    "SELECT id FROM cases UNION SELECT id FROM cases_case",
    "SELECT id FROM cases WHERE id IN (SELECT id FROM main.cases_case)",
    "WITH cases AS (SELECT * FROM cases_case) SELECT count(*) FROM cases",
    "SELECT name, sql FROM sqlite_master",
    "SELECT sql FROM sqlite_temp_master",
    "SELECT * FROM pragma_table_info('cases_case')",
    "SELECT * FROM pragma_database_list",
    "PRAGMA table_info(cases_case)",
    "PRAGMA query_only = OFF",
    "SELECT value FROM json_each((SELECT group_concat(tenant_id) FROM cases_case))",
    "SELECT * FROM json_each('[1]')",
    "SELECT load_extension('/tmp/nothing')",
    "SELECT sqlite_version()",
    "ATTACH DATABASE ':memory:' AS other",
    "ATTACH DATABASE 'file:/etc/hosts?mode=ro' AS other",
    "DELETE FROM cases_case",
    "UPDATE cases_case SET status = 'closed'",
    "INSERT INTO cases_casetype (id) VALUES ('x')",
    "CREATE TEMP TABLE t (x)",
    "DROP VIEW cases",
    "CREATE TEMP VIEW leak AS SELECT * FROM cases_case",
]


@pytest.mark.parametrize("sql", PAST_THE_CHECKER)
def test_the_walls_hold_without_the_checker(world, other_world, sql):  # noqa: F811
    with pytest.raises(ValidationFailed) as refused_:
        sqlite_sandbox.execute(tenant_id=world.tenant.id, sql=sql)
    assert refused_.value.code in ("validation_error", "query_failed"), refused_.value.message
    assert Case.objects.count() == 12 and Case.objects.filter(status="closed").count() == 4


def test_the_hidden_views_cannot_be_reached_by_a_cte_named_like_them(world, other_world):  # noqa: F811
    """The base tables are readable only from inside the views of this run; SQLite names the
    innermost view or CTE a read comes from, so a CTE called `cases` must not pass for one."""
    for name in ("cases", "tasks"):
        with pytest.raises(ValidationFailed) as denied:
            sqlite_sandbox.execute(
                tenant_id=world.tenant.id,
                sql=f"WITH {name} AS (SELECT id FROM cases_case) SELECT * FROM {name}",
            )
        assert denied.value.code == "validation_error" and "cases_case" in denied.value.message
        assert denied.value.message.startswith("Query refused: the database does not allow")
    ok = sqlite_sandbox.execute(tenant_id=world.tenant.id, sql="SELECT count(*) AS n FROM cases")
    assert ok.rows == [{"n": 6}]


def test_a_recursive_query_is_stopped_by_the_time_limit(settings, world):  # noqa: F811
    settings.REPORTS_STATEMENT_TIMEOUT_MS = 200
    forever = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
    started = time.monotonic()
    with pytest.raises(ValidationFailed) as stopped:
        sqlite_sandbox.execute(tenant_id=world.tenant.id, sql=forever)
    assert time.monotonic() - started < 5
    assert stopped.value.code == "query_timeout"
    assert stopped.value.message == "The query ran longer than 200 ms and was stopped."


def test_an_expensive_report_times_out_as_on_postgresql(api, analyst, settings, world):  # noqa: F811
    settings.REPORTS_STATEMENT_TIMEOUT_MS = 200
    client = api(analyst)
    views = ", ".join(f"cases c{i}" for i in range(10))  # 60 million rows to count
    report = saved(client, f"SELECT count(*) FROM {views}")
    started = time.monotonic()
    response = client.post(f"/reports/{report}/run")
    assert time.monotonic() - started < 5
    assert response.status_code == 400, response.json()
    assert response.json()["code"] == "query_timeout" and "200 ms" in response.json()["message"]
    assert run(client, "SELECT count(*) AS n FROM cases")["data"] == [{"n": 6}]


def test_the_row_cap_cuts_the_answer(api, analyst, settings, world):  # noqa: F811
    client = api(analyst)
    settings.REPORTS_ROW_CAP = 4
    body = run(client, "SELECT case_number FROM cases ORDER BY case_number")
    assert body["rowCount"] == 4 and body["truncated"] is True
    assert [row["case_number"] for row in body["data"]] == sorted(c.case_number for c in world.cases)[:4]
    settings.REPORTS_ROW_CAP = 6
    assert run(client, "SELECT case_number FROM cases")["truncated"] is False


def test_a_failing_query_is_a_400_with_the_reason(api, analyst, world):  # noqa: F811
    client = api(analyst)
    report = saved(client, "SELECT '2024-13-45'::timestamptz AS t FROM cases")
    response = client.post(f"/reports/{report}/run")
    assert response.status_code == 400 and response.json()["code"] == "query_failed"
    assert "month must be in 1..12" in response.json()["message"]


def test_what_sqlite_cannot_answer_the_same_way_is_refused(api, analyst, world):  # noqa: F811
    client = api(analyst)
    for query, reason in [
        ("SELECT DISTINCT ON (status) status FROM cases", "DISTINCT ON"),
        ("SELECT created_at + status::interval FROM cases", "literal can be cast to interval"),
        ("SELECT now() - interval '3 fortnights'", "not understood on SQLite"),
    ]:
        response = client.post(f"/reports/{saved(client, query)}/run")
        assert response.status_code == 400 and response.json()["code"] == "validation_error", query
        assert reason in response.json()["message"], response.json()


def test_run_endpoint_permissions(api, analyst, lacking, outsider, world):  # noqa: F811
    report = saved(api(analyst), "SELECT count(*) AS n FROM cases")
    assert api(analyst).post(f"/reports/{report}/run").json()["data"] == [{"n": 6}]
    assert api(lacking).post(f"/reports/{report}/run").status_code == 403
    assert api(outsider).post(f"/reports/{report}/run").status_code == 404
    assert api(None).post(f"/reports/{report}/run").status_code == 401


def test_a_question_is_answered_on_sqlite(api, analyst, model, tenant, world, other_world):  # noqa: F811
    response = ask(api(analyst), "how many cases by status?")
    assert response.status_code == 200, response.json()
    assert response.json()["result"] == [
        {"status": "active", "n": 3},
        {"status": "cancelled", "n": 1},
        {"status": "closed", "n": 2},
    ]
    assert (
        response.json()["query"] == "SELECT status, COUNT(*) AS n FROM cases GROUP BY status ORDER BY status"
    )
    assert AuditEvent.objects.filter(tenant_id=tenant.id, action="report:asked").count() == 1


@pytest.mark.parametrize(
    ("question", "code"), [("raw table", "validation_error"), ("sleep", "validation_error")]
)
def test_hostile_generated_sql_is_refused_on_sqlite(api, analyst, model, world, question, code):  # noqa: F811
    body = ask(api(analyst), question).json()
    assert body["code"] == code and body["details"]["query"] == REPLIES[question]


def test_ask_endpoint_permissions(api, analyst, lacking, outsider, model, world):  # noqa: F811
    assert ask(api(analyst), "fenced").json()["result"] == [{"open": 3}]
    assert ask(api(lacking), "fenced").status_code == 403
    # another tenant's member asks about their own tenant: none of ours in the answer
    assert ask(api(outsider), "fenced").json()["result"] == [{"open": 0}]
    assert ask(api(None), "fenced").status_code == 401
