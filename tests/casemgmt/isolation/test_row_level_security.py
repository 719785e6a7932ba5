"""Row-level security: a query inside a tenant's context sees only that tenant's rows, whatever its
filter, and every tenant-owned table carries the policy."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import connection

from casemgmt.accounts.models import Role, User
from casemgmt.tenancy import rls
from casemgmt.tenancy.models import Tenant


def tenant_models() -> list[type]:
    return [m for m in apps.get_app_config("tenancy").apps.get_models() if _has_tenant_column(m)]


def _has_tenant_column(model: type) -> bool:
    return any(getattr(f, "column", None) == "tenant_id" for f in model._meta.concrete_fields)  # type: ignore[attr-defined]


def is_switch_to_tenant(sql: str, tenant_id: object) -> bool:
    """The one statement that sets the tenant and the role together (see rls.enter_tenant)."""
    return sql.startswith("SELECT set_config('app.tenant_id', ") and (
        f"'{tenant_id}'" in sql and f"set_config('role', '{rls.role_name()}', false)" in sql
    )


def is_switch_back(sql: str) -> bool:
    return sql == (
        "SELECT set_config('role', 'none', false), set_config('app.tenant_id', '', false), "
        "set_config('app.team_ids', '', false)"
    )


@pytest.mark.django_db
def test_every_tenant_owned_table_has_row_level_security_and_the_policy():
    tables = [m._meta.db_table for m in tenant_models()] + ["tenancy_tenant"]  # type: ignore[attr-defined]
    assert len(tables) > 15
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_class c WHERE c.relname = ANY(%s) AND c.relrowsecurity "
            "AND EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid AND p.polname = 'tenant_isolation')",
            [tables],
        )
        protected = {row[0] for row in cursor.fetchall()}
    assert sorted(set(tables) - protected) == []


@pytest.mark.django_db
def test_the_tenant_role_is_bound_by_the_policies():
    with connection.cursor() as cursor:
        cursor.execute("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = %s", [rls.role_name()])
        assert cursor.fetchone() == (False, False)
        cursor.execute(
            "SELECT count(*) FROM pg_class WHERE relname = 'cases_case' AND pg_get_userbyid(relowner) = %s",
            [rls.role_name()],
        )
        assert cursor.fetchone()[0] == 0


@pytest.mark.django_db
def test_an_unfiltered_query_in_a_tenant_transaction_sees_only_that_tenant(tenant, other_tenant):
    everyone = User.objects.count()
    assert Role.objects.filter(tenant=other_tenant).exists()
    with rls.tenant_transaction(tenant.id):
        assert {r.tenant_id for r in Role.objects.all()} == {tenant.id}
        assert {u.tenant_id for u in User.objects.all()} == {tenant.id}
        assert list(Tenant.objects.values_list("id", flat=True)) == [tenant.id]
        assert not Role.objects.filter(tenant=other_tenant).exists()
        with connection.cursor() as cursor:  # raw SQL too
            cursor.execute("SELECT DISTINCT tenant_id FROM accounts_role")
            assert [row[0] for row in cursor.fetchall()] == [tenant.id]
    # The switch ended with the transaction: the system context sees everything again.
    assert User.objects.count() == everyone


@pytest.mark.django_db
def test_a_tenant_cannot_write_rows_of_another_tenant(tenant, other_tenant):
    from django.db import ProgrammingError

    with pytest.raises(ProgrammingError, match="row-level security"), rls.tenant_transaction(tenant.id):
        Role.objects.create(tenant=other_tenant, name="intruder", display_name="x", permissions=[])
    with rls.tenant_transaction(tenant.id):
        assert Role.objects.filter(tenant=other_tenant).update(display_name="changed") == 0
        assert Role.objects.filter(tenant=other_tenant).delete()[0] == 0
    assert not Role.objects.filter(display_name="changed").exists()


@pytest.mark.django_db
def test_no_tenant_set_means_no_rows(tenant):
    with rls.tenant_transaction(""):
        assert Role.objects.count() == 0
        assert Tenant.objects.count() == 0


@pytest.mark.django_db
def test_an_authenticated_request_queries_tenant_tables_only_in_its_tenant_context(tenant, admin_user, api):
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        assert api(admin_user).get("/cases").status_code == 200
    sql = [q["sql"] for q in captured.captured_queries]
    switch = next(i for i, q in enumerate(sql) if is_switch_to_tenant(q, tenant.id))
    back = max(i for i, q in enumerate(sql) if is_switch_back(q))
    cases = [i for i, q in enumerate(sql) if "cases_case" in q]
    assert cases and all(switch < i < back for i in cases)
    assert back == len(sql) - 1  # nothing after the switch back
    # The connection is back in the system context for whatever uses it next.
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user = session_user, current_setting('app.tenant_id', true)")
        assert cursor.fetchone() == (True, "")


@pytest.mark.django_db
def test_the_request_context_holds_until_left(tenant, other_tenant):
    rls.enter_tenant(tenant.id)
    try:
        assert set(Role.objects.values_list("tenant_id", flat=True)) == {tenant.id}
    finally:
        rls.leave_tenant()
    assert set(Role.objects.values_list("tenant_id", flat=True)) >= {tenant.id, other_tenant.id}


@pytest.mark.django_db
def test_a_tenant_staff_member_uses_the_django_admin_in_the_tenant_context(admin_user, other_tenant, client):
    from django.test.utils import CaptureQueriesContext

    assert admin_user.is_staff
    client.force_login(admin_user)
    with CaptureQueriesContext(connection) as captured:
        page = client.get("/admin/accounts/user/")
    assert page.status_code == 200
    assert other_tenant.name.encode() not in page.content
    sql = [q["sql"] for q in captured.captured_queries]
    switch = next(i for i, q in enumerate(sql) if is_switch_to_tenant(q, admin_user.tenant_id))
    users = [i for i, q in enumerate(sql) if 'FROM "accounts_user"' in q]
    assert users and all(i > switch for i in users[1:])  # after the session's own user lookup
    assert is_switch_back(sql[-1])


@pytest.mark.django_db
def test_a_missing_tenant_role_is_503_never_an_unconfined_request(settings, admin_user, api):
    settings.TENANT_DB_ROLE = "casemgmt_no_such_role"
    response = api(admin_user).get("/cases")
    assert response.status_code == 503 and response.json()["code"] == "not_configured"


@pytest.mark.django_db
def test_case_search_can_use_its_index_under_the_policy(tenant):
    """`@@` is declared leakproof after migrate, so the planner may match through the GIN index
    before the tenant policy rather than filtering every row of the tenant."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT proleakproof FROM pg_proc WHERE proname = 'ts_match_vq'")
        assert cursor.fetchone() == (True,)
    with connection.cursor() as cursor:
        # Only the GIN index is left to choose from (dropped in the test's transaction, rolled back
        # after it): without leakproof `@@`, the plan could still not use it under the policy.
        cursor.execute(
            "SELECT conname FROM pg_constraint WHERE conrelid = 'cases_case'::regclass AND contype = 'u'"
        )
        for (name,) in cursor.fetchall():
            cursor.execute(f'ALTER TABLE cases_case DROP CONSTRAINT "{name}"')
        cursor.execute(
            "SELECT i.indexname FROM pg_indexes i JOIN pg_class c ON c.relname = i.indexname "
            "JOIN pg_index x ON x.indexrelid = c.oid WHERE i.tablename = 'cases_case' "
            "AND NOT x.indisprimary AND i.indexname <> 'case_search_vector_gin'"
        )
        for (name,) in cursor.fetchall():
            cursor.execute(f'DROP INDEX "{name}"')
    with rls.tenant_transaction(tenant.id), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # the tiny test table would be scanned anyway
        cursor.execute(
            "EXPLAIN SELECT id FROM cases_case WHERE search_vector @@ websearch_to_tsquery('english', 'boiler')"
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Index Cond: (search_vector @@" in plan, plan
