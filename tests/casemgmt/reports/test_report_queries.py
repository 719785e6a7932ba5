"""Saved report queries on PostgreSQL: the tenant wall, the database's own walls beneath the checker,
the statement timeout, the row cap and failing queries."""

from __future__ import annotations

import time

import pytest
from django.db import connection

from casemgmt.cases.models import Case
from casemgmt.cases.services import case_type_create
from casemgmt.reports.sandbox import run_readonly
from shared.api.errors import NotConfigured, ValidationFailed

pytestmark = pytest.mark.django_db


def saved(client, query: str) -> str:
    response = client.post("/reports", {"name": "q", "query": query}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()["id"]


def run(client, query: str) -> dict:
    response = client.post(f"/reports/{saved(client, query)}/run")
    assert response.status_code == 200, response.json()
    return response.json()


def refused(client, query: str) -> dict:
    response = client.post("/reports", {"name": "q", "query": query}, format="json")
    assert response.status_code == 400, response.json()
    return response.json()


def test_a_query_reads_only_the_callers_tenant(api, analyst, world, other_world):
    client = api(analyst)
    mine = {str(c.id) for c in world.cases}
    assert {row["id"] for row in run(client, "SELECT id FROM cases")["data"]} == mine
    tasks = run(client, "SELECT case_id FROM tasks")["data"]
    assert len(tasks) == 4 and {row["case_id"] for row in tasks} <= mine
    joined = run(client, "SELECT c.id FROM cases c JOIN tasks t ON t.case_id = c.id")["data"]
    assert {row["id"] for row in joined} <= mine


def test_naming_another_tenants_rows_finds_nothing(api, analyst, world, other_world):
    client = api(analyst)
    theirs = str(other_world.cases[0].id)
    their_number = other_world.cases[4].case_number
    assert run(client, f"SELECT * FROM cases WHERE id = '{theirs}'")["data"] == []
    assert run(client, f"SELECT * FROM tasks WHERE case_id = '{theirs}'")["data"] == []
    assert run(
        client, f"SELECT count(*) AS n FROM cases WHERE id IN (SELECT id FROM cases WHERE id = '{theirs}')"
    )["data"] == [{"n": 0}]
    # the same case number exists in both tenants: only ours answers
    assert run(client, f"SELECT id FROM cases WHERE case_number = '{their_number}'")["data"] == [
        {"id": str(world.cases[4].id)}
    ]
    assert run(client, "SELECT (SELECT count(*) FROM cases) AS n")["data"] == [{"n": 6}]
    assert run(client, "SELECT count(*) AS n FROM cases a, cases b")["data"] == [{"n": 36}]


TRICKS = [
    "INSERT INTO cases (id) VALUES (gen_random_uuid())",
    "UPDATE cases SET status = 'closed'",
    "DELETE FROM cases",
    "DROP TABLE cases_case",
    "COPY cases_case TO STDOUT",
    "WITH gone AS (DELETE FROM cases RETURNING id) SELECT count(*) FROM gone",
    "SELECT 1; DELETE FROM cases_case",
    "SELECT count(*) FROM cases; SELECT count(*) FROM cases_case",
    "SELECT * FROM pg_catalog.pg_roles",
    "SELECT table_name FROM information_schema.tables",
    "SELECT id FROM cases UNION SELECT id FROM cases_case",
    "SELECT id FROM cases UNION ALL SELECT id FROM public.cases_case",
    "SELECT * FROM cases WHERE tenant_id IS NOT NULL",
    "SELECT * FROM cases WHERE id IN (SELECT id FROM cases_case)",
    "SELECT * FROM cases WHERE set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', true) <> ''",
    "SELECT pg_sleep(10)",
    "SELECT * FROM dblink('dbname=case', 'SELECT id FROM cases_case') AS t(id uuid)",
    "SELECT lo_import('/etc/passwd')",
]


def test_tricks_are_refused_before_anything_is_stored(api, analyst, world, other_world):
    client = api(analyst)
    for query in TRICKS:
        body = refused(client, query)
        assert body["code"] == "validation_error" and body["details"]["field"] == "query", query
        assert body["message"].startswith("Query refused: "), body
    assert client.get("/reports").json() == []
    assert Case.objects.count() == 12 and Case.objects.filter(status="closed").count() == 4


def test_the_database_walls_hold_without_the_checker(world, other_world):
    """What runs here skips the checker: the role, the schema and the read-only transaction
    still refuse. A privilege error can only mean missing grants for a checked query, so it is
    reported as the service's set-up (503), not as the caller's query."""
    tenant = world.tenant.id
    for sql in ["SELECT count(*) FROM public.cases_case", "SELECT count(*) FROM public.accounts_user"]:
        with pytest.raises(NotConfigured) as denied:
            run_readonly(tenant_id=tenant, sql=sql)
        assert "permission denied" in denied.value.message, denied.value.message
    with pytest.raises(ValidationFailed) as missing:
        run_readonly(tenant_id=tenant, sql="SELECT count(*) FROM cases_case")
    assert missing.value.code == "query_failed" and "does not exist" in missing.value.message
    assert run_readonly(tenant_id=tenant, sql="SELECT count(*) AS n FROM cases").rows == [{"n": 6}]


def test_a_role_without_its_grants_is_503(api, analyst, world):
    client = api(analyst)
    report = saved(client, "SELECT count(*) FROM cases")
    with connection.cursor() as cursor:  # as after a restore that dropped the privileges
        cursor.execute("REVOKE SELECT ON reporting.cases FROM casemgmt_report_reader")
    response = client.post(f"/reports/{report}/run")
    assert response.status_code == 503 and response.json()["code"] == "not_configured"
    assert "permission denied" in response.json()["message"]


def test_the_transaction_is_read_only_even_without_the_role(settings, world):
    settings.REPORTS_DB_ROLE = ""
    with pytest.raises(ValidationFailed) as caught:
        run_readonly(tenant_id=world.tenant.id, sql="SELECT nextval('public.cases_casecounter_id_seq')")
    assert "read-only transaction" in caught.value.message


def test_views_show_nothing_without_the_tenant_setting(world):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT (SELECT count(*) FROM reporting.cases), (SELECT count(*) FROM reporting.tasks)"
        )
        assert cursor.fetchone() == (0, 0)


def test_nothing_of_the_sandbox_outlives_a_run(api, analyst, world):
    def session_state():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_user, current_setting('transaction_read_only'), current_setting('search_path'),"
                " current_setting('statement_timeout'), current_setting('app.tenant_id', true)"
            )
            return cursor.fetchone()

    before = session_state()
    run(api(analyst), "SELECT count(*) FROM cases")
    api(analyst).post(f"/reports/{saved(api(analyst), 'SELECT 1 / 0 AS x FROM cases')}/run")
    after = session_state()
    # A custom setting once set in a session reads '' rather than NULL afterwards; both mean unset.
    assert after[:4] == before[:4] and after[4] in ("", None)
    Case.objects.filter(pk=world.cases[0].pk).update(display_name="still writable")


def test_the_statement_timeout_stops_an_expensive_query(api, analyst, settings, world):
    settings.REPORTS_STATEMENT_TIMEOUT_MS = 200
    client = api(analyst)
    # 6 cases joined with themselves ten times: 60 million rows to count.
    views = ", ".join(f"cases c{i}" for i in range(10))
    report = saved(client, f"SELECT count(*) FROM {views}")
    started = time.monotonic()
    response = client.post(f"/reports/{report}/run")
    elapsed = time.monotonic() - started
    assert response.status_code == 400, response.json()
    assert response.json()["code"] == "query_timeout" and "200 ms" in response.json()["message"]
    assert elapsed < 5
    assert run(client, "SELECT count(*) AS n FROM cases")["data"] == [{"n": 6}]  # the next run is fine


def test_the_row_cap_cuts_the_answer(api, analyst, settings, world):
    assert settings.REPORTS_ROW_CAP == 10_000
    client = api(analyst)
    settings.REPORTS_ROW_CAP = 4
    body = run(client, "SELECT case_number FROM cases ORDER BY case_number")
    assert body["rowCount"] == 4 and body["truncated"] is True
    numbers = sorted(c.case_number for c in world.cases)
    assert [row["case_number"] for row in body["data"]] == numbers[:4]
    settings.REPORTS_ROW_CAP = 6
    body = run(client, "SELECT case_number FROM cases")
    assert body["rowCount"] == 6 and body["truncated"] is False


def test_the_row_cap_holds_for_a_large_answer(api, analyst, world):
    body = run(api(analyst), "SELECT a.id FROM cases a, cases b, cases c, cases d, cases e, cases f")
    assert body["rowCount"] == 10_000 and body["truncated"] is True  # 46,656 rows in all


def test_a_failing_query_is_a_400_with_the_reason(api, analyst, world):
    client = api(analyst)
    response = client.post(f"/reports/{saved(client, 'SELECT 1 / (count(*) - count(*)) FROM cases')}/run")
    assert response.status_code == 400
    assert response.json()["code"] == "query_failed" and "division by zero" in response.json()["message"]


def test_values_come_back_as_json(api, analyst, world):
    row = run(
        api(analyst),
        "SELECT data, created_at, closed_at - created_at AS took, (data->>'amount')::numeric AS amount,"
        " id, c.id AS id FROM cases c WHERE status = 'closed' ORDER BY created_at LIMIT 1",
    )["data"][0]
    late = world.cases[2]
    assert row["data"] == {"title": "claim 2", "amount": 2} and row["amount"] == 2
    assert row["took"] == pytest.approx(3 * 3600, abs=1)
    assert row["created_at"].endswith("Z") and row["id"] == row["id_2"] == str(late.id)


@pytest.mark.django_db(transaction=True)
def test_a_run_in_its_own_transaction_leaves_the_connection_as_it_was(api, admin_user):
    """As in production (autocommit, no outer transaction): the sandbox's transaction is rolled
    back whole and the next statement on the same connection is an ordinary write."""
    assert not connection.in_atomic_block
    case_type_create(user=admin_user, key="kind", display_name="Kind", schema={"type": "object"})
    result = run_readonly(tenant_id=admin_user.tenant_id, sql="SELECT count(*) AS n FROM cases")
    assert result.rows == [{"n": 0}]
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user, current_setting('transaction_read_only')")
        assert cursor.fetchone() == ("postgres", "off")
    case_type_create(user=admin_user, key="other", display_name="Other", schema={"type": "object"})


def test_values_json_cannot_hold_are_text_or_a_400(api, analyst, world):
    client = api(analyst)
    row = run(
        client,
        "SELECT 'NaN'::numeric AS a, 'Infinity'::float AS b, '-Infinity'::float AS c FROM cases LIMIT 1",
    )
    assert row["data"] == [{"a": "nan", "b": "inf", "c": "-inf"}]
    report = saved(client, "SELECT 'infinity'::timestamptz AS t")
    response = client.post(f"/reports/{report}/run")
    assert response.status_code == 400 and response.json()["code"] == "query_failed"
