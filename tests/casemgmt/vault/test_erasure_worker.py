"""An erasure job whose Celery worker is killed (SIGKILL) mid-step is resumed by the next worker
and finished, not left half done. Real worker processes, real PostgreSQL, real Redis."""

from __future__ import annotations

import signal
import uuid

import psycopg
import pytest
from django.db import connection

from casemgmt.audit.models import AuditEvent
from casemgmt.cases.models import Case
from casemgmt.vault.models import Erasure
from tests.casemgmt.workflows.conftest import Flow, ok, task_step
from tests.support.processes import database_url, start_celery_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

EMAIL = "kill.me@example.test"


def waiting_lock_requests(conn: psycopg.Connection) -> int:
    row = conn.execute(
        "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        " WHERE NOT l.granted AND a.datname = current_database()"
    ).fetchone()
    return row[0] if row else 0


def stale(erasure_id: str, seconds: float) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT heartbeat_at < now() - make_interval(secs => %s) FROM vault_erasure WHERE id = %s",
            [seconds, erasure_id],
        )
        return bool(cursor.fetchone()[0])


def test_killed_worker_mid_erasure_is_resumed_by_the_next_worker(
    api, admin_user, tenant, make_user, subprocess_env, settings
):
    queue = f"case.erasure-test-{uuid.uuid4().hex[:8]}"
    settings.ERASURE_QUEUE = queue
    env = {**subprocess_env, "CASE_ERASURE_QUEUE": queue, "CASE_ERASURE_LEASE_SECONDS": "1"}
    subject = make_user(
        tenant, permissions=["cases:create", "cases:read"], email=EMAIL, display_name="Kim Kill"
    )
    flow = Flow(api, admin_user)
    flow.workflow([task_step("review")])
    case = ok(
        api(subject).post("/cases", {"case_type_key": flow.key, "case_data": {"kind": EMAIL}}, format="json"),
        201,
    )

    # Hold the case's row lock so the job blocks inside its "cases" step, after earlier steps committed.
    blocker = psycopg.connect(database_url(connection.settings_dict), autocommit=False)
    blocker.execute("SELECT 1 FROM cases_case WHERE id = %s FOR UPDATE", [case["id"]])
    observer = psycopg.connect(database_url(connection.settings_dict), autocommit=True)
    first = start_celery_worker(
        name="erasure-first", app="casemgmt.config", queues=[queue], env=env, concurrency=1
    )
    second = None
    try:
        accepted = api(admin_user).post("/admin/erasure", {"userId": str(subject.id), "reason": "kill test"}, format="json")  # fmt: skip
        assert accepted.status_code == 202
        erasure_id = accepted.json()["id"]

        def blocked_in_cases_step() -> bool:
            erasure = Erasure.objects.get(id=erasure_id)
            return erasure.steps_done == ["disable", "tasks"] and waiting_lock_requests(observer) > 0

        wait_for(
            blocked_in_cases_step, timeout=60, what=f"the job to block in its cases step\n{first.log_text()}"
        )
        first.kill(signal.SIGKILL)
        wait_for(lambda: not first.alive(), timeout=10, what="the first worker to die")
        blocker.rollback()  # the dead worker's transaction can now end (it rolls back)

        erasure = Erasure.objects.get(id=erasure_id)
        assert erasure.status == Erasure.RUNNING and erasure.attempt == 1
        wait_for(
            lambda: waiting_lock_requests(observer) == 0, timeout=30, what="the dead worker's session to end"
        )
        assert Case.objects.get(id=case["id"]).data == {"kind": EMAIL}  # its cases step left nothing behind
        wait_for(lambda: stale(erasure_id, 1), timeout=10, what="the dead attempt's heartbeat to go stale")

        second = start_celery_worker(name="erasure-second", app="casemgmt.config", queues=[queue], env=env, concurrency=1)  # fmt: skip
        wait_for(
            lambda: Erasure.objects.get(id=erasure_id).status == Erasure.COMPLETED,
            timeout=90,
            what=f"the next worker to finish the job\n{second.log_text()}",
        )
    finally:
        first.stop()
        if second is not None:
            second.stop()
        blocker.close()
        observer.close()

    erasure = Erasure.objects.get(id=erasure_id)
    assert erasure.attempt == 2
    assert erasure.steps_done == [
        "disable",
        "tasks",
        "cases",
        "audit",
        "documents",
        "blobs",
        "principal",
        "complete",
    ]
    assert Case.objects.get(id=case["id"]).data == {"kind": "[erased]"}
    assert AuditEvent.objects.filter(tenant=tenant, action="erasure:completed").count() == 1
    assert ok(api(admin_user).get("/audit/verify-chain"))["status"] == "valid"
    subject.refresh_from_db()
    assert not subject.is_active and subject.email.endswith("@erased.invalid")
