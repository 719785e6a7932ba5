"""With a connection pool (production), a request's connection goes back to the pool still in its
tenant context and is switched back by whoever takes it next, before their first statement, unless
that is itself a switch. A pool of one connection makes every request below reuse the same database
session, so a tenant context left on it would show at once."""

from __future__ import annotations

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

from casemgmt.cases.services import case_create, case_type_create
from casemgmt.tenancy import rls
from tests.casemgmt.conftest import PASSWORD

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def pool_of_one():
    """The default database through a real psycopg pool holding a single connection."""
    default = connections["default"]
    default.close()
    default.settings_dict["OPTIONS"]["pool"] = {"min_size": 1, "max_size": 1, "timeout": 10}
    try:
        assert default.pool is not None
        yield default.pool
    finally:
        default.close()
        default.close_pool()
        del default.settings_dict["OPTIONS"]["pool"]


def session_context(pool) -> tuple[bool, str]:
    """The pooled session's role and tenant setting, read past Django (as the pool holds it)."""
    with pool.connection() as raw:
        row = raw.execute(
            "SELECT current_user = session_user, current_setting('app.tenant_id', true)"
        ).fetchone()
    return row[0], row[1] or ""


def system_context_through_django() -> tuple[bool, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user = session_user, current_setting('app.tenant_id', true)")
        is_system, tenant = cursor.fetchone()
    return is_system, tenant or ""


@pytest.fixture
def one_case_each(tenant, other_tenant, admin_user):
    case_type = case_type_create(
        user=admin_user, key="claim", display_name="Claim", schema={"type": "object"}
    )
    return case_create(user=admin_user, case_type=case_type, data={"title": "Acme's"})


def test_an_authenticated_request_takes_one_statement_for_its_tenant_context(pool_of_one, api, admin_user):
    client = api(admin_user)
    assert client.get("/cases").status_code == 200  # the principal is now cached
    with CaptureQueriesContext(connection) as captured:
        assert client.get("/cases").status_code == 200
    sql = [q["sql"] for q in captured.captured_queries]
    assert len(sql) == 2 and sql[0].startswith("SELECT set_config('app.tenant_id'"), sql
    # The session went back to the pool switched...
    assert session_context(pool_of_one) == (False, str(admin_user.tenant_id))
    # ...and whatever takes it next through Django starts in the system context.
    assert system_context_through_django() == (True, "")


def test_the_next_request_never_inherits_the_tenant_context(
    pool_of_one, api, admin_user, other_tenant, one_case_each
):
    from casemgmt.accounts.models import User

    other_admin = User.objects.get(tenant=other_tenant, roles__name="admin")
    assert api(admin_user).get("/cases").json()["total"] == 1

    # Another tenant's request on the same session sees its own rows only.
    assert api(other_admin).get("/cases").json()["total"] == 0
    # An unauthenticated request (system context: login finds users of every tenant) right after.
    login = api(None).post("/auth/login", {"email": other_admin.email, "password": PASSWORD}, format="json")
    assert login.status_code == 200, login.json()
    assert api(admin_user).get("/cases").json()["total"] == 1
    assert system_context_through_django() == (True, "")


def test_a_failed_switch_on_a_switched_session_leaves_nothing_behind(pool_of_one, api, admin_user, settings):
    assert api(admin_user).get("/cases").status_code == 200
    assert session_context(pool_of_one)[1] == str(admin_user.tenant_id)

    role = rls.role_name()
    settings.TENANT_DB_ROLE = "casemgmt_no_such_role"
    refused = api(admin_user).get("/cases")
    assert refused.status_code == 503 and refused.json()["code"] == "not_configured"
    settings.TENANT_DB_ROLE = role

    assert system_context_through_django() == (True, "")


def test_without_a_pool_the_request_switches_back_itself(api, admin_user):
    assert connection.settings_dict["OPTIONS"].get("pool") is None
    assert api(admin_user).get("/cases").status_code == 200
    with connection.cursor() as cursor:  # no checkout here: the same session the request used
        cursor.execute("SELECT current_user = session_user, current_setting('app.tenant_id', true)")
        assert cursor.fetchone() == (True, "")
