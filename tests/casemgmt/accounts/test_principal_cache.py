"""HTTP authentication reuses a verified principal for at most PRINCIPAL_CACHE_SECONDS per process:
changes made in this process apply at once, changes made elsewhere within the TTL."""

from datetime import UTC, datetime, timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext

from casemgmt.accounts import authentication
from casemgmt.accounts.models import RevokedToken, Role, User
from casemgmt.accounts.services import principal_disable, role_set_permissions
from casemgmt.accounts.tokens import issue_for
from tests.support.processes import wait_for


def auth_queries(queries: list[dict[str, str]]) -> list[str]:
    return [q["sql"] for q in queries if "accounts_user" in q["sql"] or "accounts_revokedtoken" in q["sql"]]


def test_a_burst_with_one_token_authenticates_once(api, admin_user, monkeypatch):
    monkeypatch.setattr(authentication, "PRINCIPAL_CACHE_SECONDS", 60.0)  # no expiry within the test
    client = api(admin_user)
    assert client.get("/cases").status_code == 200
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/cases").status_code == 200
    assert auth_queries(queries.captured_queries) == []


def test_revocation_written_by_another_process_is_refused_within_the_ttl(api, admin_user):
    token = issue_for(admin_user)
    client = api(None)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token.token}")
    assert client.get("/cases").status_code == 200
    # bulk_create sends no signal: this process learns of it only from the database, as it would of
    # a logout handled by another web process.
    RevokedToken.objects.bulk_create(
        [RevokedToken(jti=token.jti, expires_at=datetime.now(UTC) + timedelta(hours=1))]
    )
    wait_for(
        lambda: client.get("/cases").status_code == 401,
        timeout=authentication.PRINCIPAL_CACHE_SECONDS + 1,
        what="the revoked token to be refused",
    )


def test_changes_made_in_this_process_apply_at_once(api, admin_user, make_user, tenant, monkeypatch):
    monkeypatch.setattr(authentication, "PRINCIPAL_CACHE_SECONDS", 60.0)
    worker = make_user(tenant, roles=["case_worker"])
    client = api(worker)
    assert client.get("/cases").status_code == 200

    role = Role.objects.get(tenant=tenant, name="case_worker")
    role_set_permissions(role=role, actor=admin_user, permissions=["audit:read"])
    assert client.get("/cases").status_code == 403  # the role no longer grants cases:read

    principal_disable(user=User.objects.get(pk=worker.pk), actor=admin_user)  # a queryset update
    assert client.get("/cases").status_code == 401

    admin = api(admin_user)
    assert admin.get("/cases").status_code == 200
    assert admin.post("/auth/logout").status_code in (200, 204)
    assert admin.get("/cases").status_code == 401


def test_api_calls_carry_no_session_or_csrf_state_while_the_console_does(api, admin_user, client):
    response = api(admin_user).get("/cases")
    assert response.status_code == 200
    assert not response.cookies and "Cookie" not in response.get("Vary", "")
    page = client.get("/console/login")
    assert page.status_code == 200 and "csrftoken" in page.cookies
