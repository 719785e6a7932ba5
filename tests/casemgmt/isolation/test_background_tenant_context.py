"""Row-level security outside HTTP requests: Celery tasks and the WebSocket consumer query in their
tenant's context, so a query there that forgets its tenant filter sees only that tenant's rows.

As in test_row_level_security.py, the tests connect as the superuser `postgres`, which the policies
never bind: they pass only because the code switches to the tenant role."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext

from casemgmt.accounts.models import Role, User
from casemgmt.accounts.tasks import send_welcome_email
from casemgmt.accounts.tokens import issue_for
from casemgmt.config.celery import app
from casemgmt.connectors.delivery import deliveries_sweep
from casemgmt.connectors.models import Delivery
from casemgmt.realtime.auth import resolve_sync
from casemgmt.realtime.consumers import in_tenant_sync
from casemgmt.tenancy import rls
from casemgmt.tenancy.background import row_task
from shared.api.time import now_ms

pytestmark = pytest.mark.django_db


def visible_tenants() -> tuple[set, set]:
    """What an unfiltered query sees: the tenants of every role and every user it can read."""
    return (
        set(Role.objects.values_list("tenant_id", flat=True)),
        set(User.objects.values_list("tenant_id", flat=True)),
    )


def test_every_case_service_task_declares_the_context_its_queries_run_in():
    app.loader.import_default_modules()
    tasks = {name: task for name, task in app.tasks.items() if name.startswith("casemgmt.")}
    assert len(tasks) >= 15
    undeclared = [
        name
        for name, task in tasks.items()
        if not hasattr(task.run, "tenant_row_model") and not getattr(task.run, "system_context_reason", "")
    ]
    assert undeclared == [], (
        "declare @row_task(Model) or @system_task(reason) (casemgmt/tenancy/background.py)"
    )


def test_a_row_task_sees_only_its_rows_tenant_whatever_its_filter(tenant, other_tenant, admin_user):
    @row_task(User)
    def probe(user_id: str) -> tuple[set, set]:
        return visible_tenants()

    assert probe(str(admin_user.id)) == ({tenant.id}, {tenant.id})
    assert probe(str(uuid.uuid4())) == (set(), set())  # no such row: no tenant, no rows
    # The system context is back afterwards.
    assert {tenant.id, other_tenant.id} <= visible_tenants()[0]


def test_a_task_runs_every_query_after_its_row_lookup_in_the_rows_tenant(tenant, other_tenant, make_user):
    user = make_user(tenant)
    User.objects.filter(pk=user.pk).update(welcome_sent_at=None)
    mail.outbox.clear()
    with CaptureQueriesContext(connection) as captured:
        send_welcome_email(str(user.id))
    assert [m.to for m in mail.outbox] == [[user.email]]
    sql = [q["sql"] for q in captured.captured_queries]
    # The switch is one statement setting the tenant and the role together (rls._SWITCH).
    switch = next(i for i, q in enumerate(sql) if q.startswith("SELECT set_config('app.tenant_id'"))
    assert switch == 1, sql[:2]  # the row's tenant lookup, then the switch to its tenant
    assert str(tenant.id) in sql[switch] and f"'{rls.role_name()}'" in sql[switch]
    assert sql[-1].startswith("SELECT set_config('role', 'none'")  # and back to the system context
    tables = [i for i, q in enumerate(sql) if '"accounts_user"' in q or '"tenancy_' in q]
    assert all(switch < i < len(sql) - 1 for i in tables[1:])


def test_a_sweep_takes_back_each_lost_row_in_its_own_tenant(tenant, other_tenant):
    lost = [
        Delivery.objects.create(
            tenant=owner,
            connector="http",
            action="request",
            status=Delivery.SENDING,
            attempts=1,
            next_attempt_at=now_ms(),
            claimed_until=now_ms() - timedelta(minutes=5),
        )  # fmt: skip
        for owner in (tenant, other_tenant)
    ]
    with CaptureQueriesContext(connection) as captured:
        assert deliveries_sweep() == 2
    sql = [q["sql"] for q in captured.captured_queries]
    locks = [i for i, q in enumerate(sql) if '"connectors_delivery"' in q and "FOR UPDATE" in q]
    assert len(locks) == 2
    for i, delivery in zip(locks, lost, strict=True):
        switched = max(j for j in range(i) if "set_config('app.tenant_id'" in sql[j])
        assert str(delivery.tenant_id) in sql[switched]
        assert sql[switched + 1].startswith(f"SET LOCAL ROLE {rls.role_name()}")
    assert {d.status for d in Delivery.objects.filter(pk__in=[d.pk for d in lost])} == {Delivery.PENDING}


def test_the_websocket_consumer_queries_in_its_sockets_tenant(tenant, other_tenant, admin_user):
    assert in_tenant_sync(tenant.id, visible_tenants) == ({tenant.id}, {tenant.id})
    # The re-check of an open socket's principal runs there too: looked up by id alone, the user
    # is found in its own tenant's context and hidden in another's.
    token = issue_for(admin_user).token
    assert in_tenant_sync(tenant.id, resolve_sync, token).pk == admin_user.pk
    assert not in_tenant_sync(other_tenant.id, resolve_sync, token).is_authenticated
    assert {tenant.id, other_tenant.id} <= visible_tenants()[0]
