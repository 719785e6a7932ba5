"""The orchestrator audit trail: every write appends an event naming its caller, with no secrets;
GET /api/audit (filters, paging), /api/audit/verify and /api/audit/export, admin only."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.db import DatabaseError, connection, transaction

from orchestrator.audit.models import AuditEvent
from orchestrator.security.services import api_key_create, api_key_revoke
from tests.orchestrator.security.helpers import api_key_headers, bearer

pytestmark = pytest.mark.django_db
SECRET = "whsec-super-secret-value-0123456789"
TOKEN = "Bearer header-token-that-must-stay-hidden"


@pytest.fixture
def admin(settings):
    settings.ORCH_SECURITY_ENABLED = True
    return api_key_headers("admin", name="ops-admin")


def last_event(action: str) -> AuditEvent:
    event = AuditEvent.objects.filter(action=action).order_by("-sequence").first()
    assert event is not None, action
    return event


def ok(response, status=(200, 201)):
    assert response.status_code in ((status,) if isinstance(status, int) else status), response.content
    return response


def make_definitions(api, headers):
    ok(api.put("/api/tasks/extract", {"command": "true"}, format="json", **headers))
    ok(api.put("/api/dags/etl", {"tasks": [{"id": "extract"}]}, format="json", **headers))


def test_definition_writes_are_recorded_with_the_api_key_name(api, admin):
    make_definitions(api, admin)
    ok(api.put("/api/tasks/extract", {"command": "echo hi"}, format="json", **admin))
    created, updated = AuditEvent.objects.filter(resource="tasks/extract").order_by("sequence")
    assert (created.action, updated.action) == ("task.created", "task.updated")
    assert updated.actor == "ops-admin" and updated.changes["command"] == "echo hi"
    assert last_event("dag.created").resource == "dags/etl"
    ok(api.delete("/api/dags/etl", **admin))
    assert last_event("dag.deleted").actor == "ops-admin"
    ok(api.delete("/api/tasks/extract", **admin))
    assert last_event("task.deleted").resource == "tasks/extract"


def test_contexts_parameter_sets_and_pools_keep_names_but_not_values(api, admin):
    ok(api.put("/api/contexts/prod", {"variables": {"DB_PASSWORD": "hunter2"}}, format="json", **admin))
    ok(api.put("/api/parameter-sets/nightly", {"parameters": {"TOKEN": "s3cr3t"}}, format="json", **admin))
    ok(api.put("/api/pools/db", {"slots": 3}, format="json", **admin))
    assert last_event("context.created").changes["variables"] == ["DB_PASSWORD"]
    assert last_event("parameter_set.created").changes["parameters"] == ["TOKEN"]
    assert last_event("pool.created").changes == {"slots": 3}
    dumped = json.dumps(list(AuditEvent.objects.values_list("changes", flat=True)))
    assert "hunter2" not in dumped and "s3cr3t" not in dumped


def test_run_writes_are_recorded_with_the_jwt_subject(api, admin):
    make_definitions(api, admin)
    operator = bearer("operator", subject="carol")
    run_id = ok(api.post("/api/schedule-dag", {"dag_id": "etl"}, format="json", **operator)).json()["run_id"]
    scheduled = last_event("run.scheduled")
    assert (scheduled.actor, scheduled.resource) == ("carol", f"runs/{run_id}")
    assert scheduled.changes["dag_id"] == "etl"
    ok(api.post(f"/api/runs/{run_id}/pause", {}, format="json", **operator))
    assert last_event("run.paused").actor == "carol"
    ok(api.post(f"/api/runs/{run_id}/resume", {}, format="json", **operator))
    assert last_event("run.resumed").actor == "carol"
    ok(api.post(f"/api/cancel-run/{run_id}", {}, format="json", **operator))
    assert last_event("run.cancelled").resource == f"runs/{run_id}"
    rerun = ok(api.post(f"/api/rerun/{run_id}", {}, format="json", **operator)).json()
    event = last_event("run.rerun")
    assert event.actor == "carol" and event.changes["original_run"] == run_id
    assert event.resource.startswith("runs/") and event.resource != f"runs/{run_id}", rerun


def test_queue_purge_is_recorded(api, admin):
    make_definitions(api, admin)
    ok(api.post("/api/queues/default/purge", {}, format="json", **admin))
    event = last_event("queue.purged")
    assert (event.actor, event.resource) == ("ops-admin", "queues/default")


def test_schedule_writes_are_recorded(api, admin):
    make_definitions(api, admin)
    created = ok(api.post("/api/schedules", {"dag_id": "etl", "cron": "0 * * * *"}, format="json", **admin))
    schedule_id = created.json()["id"]
    assert last_event("schedule.created").changes["cron"] == "0 * * * *"
    body = {"dag_id": "etl", "cron": "5 * * * *"}
    ok(api.put(f"/api/schedules/{schedule_id}", body, format="json", **admin))
    assert last_event("schedule.updated").changes["cron"] == "5 * * * *"
    ok(api.post(f"/api/schedules/{schedule_id}/pause", {}, format="json", **admin))
    ok(api.post(f"/api/schedules/{schedule_id}/resume", {}, format="json", **admin))
    ok(api.delete(f"/api/schedules/{schedule_id}", **admin))
    actions = list(
        AuditEvent.objects.filter(resource=f"schedules/{schedule_id}")
        .order_by("sequence")
        .values_list("action", flat=True)
    )
    assert actions == [
        "schedule.created",
        "schedule.updated",
        "schedule.paused",
        "schedule.resumed",
        "schedule.deleted",
    ]


def test_webhook_writes_never_record_the_secret_or_header_values(api, admin):
    body = {
        "name": "ops hook", "url": "http://127.0.0.1:9/hook", "events": ["task.failed"],
        "secret": SECRET, "headers": {"Authorization": TOKEN},
    }  # fmt: skip
    webhook_id = ok(api.post("/api/webhooks", body, format="json", **admin)).json()["id"]
    event = last_event("webhook.created")
    assert event.actor == "ops-admin" and event.changes["headers"] == ["Authorization"]
    assert SECRET not in json.dumps(event.changes) and TOKEN not in json.dumps(event.changes)
    ok(api.delete(f"/api/webhooks/{webhook_id}", **admin))
    assert last_event("webhook.deleted").resource == f"webhooks/{webhook_id}"


def test_api_key_writes_never_record_the_key():
    key, plaintext = api_key_create(name="ci", role="operator", actor="root")
    event = last_event("api_key.created")
    assert (event.actor, event.resource, event.changes) == ("root", "api-keys/ci", {"role": "operator"})
    assert plaintext not in json.dumps(event.changes) and key.key_hash not in json.dumps(event.changes)
    api_key_revoke(name="ci")
    assert last_event("api_key.revoked").actor == "system"


def test_a_failed_write_leaves_no_event(api, admin):
    before = AuditEvent.objects.count()
    response = api.put("/api/tasks/a", {"command": "true", "dependencies": ["ghost"]}, format="json", **admin)
    assert response.status_code == 400
    assert AuditEvent.objects.count() == before


def test_list_filters_and_pages_newest_first(api, admin):
    make_definitions(api, admin)
    ok(api.put("/api/pools/db", {"slots": 1}, format="json", **bearer("admin", subject="dave")))
    body = api.get("/api/audit", **admin).json()
    assert body["total"] == AuditEvent.objects.count() and body["limit"] == 50 and body["offset"] == 0
    assert body["events"][0]["action"] == "pool.created"
    first = body["events"][0]
    assert set(first) >= {"id", "timestamp", "actor", "action", "resource", "changes", "hash", "previousHash"}
    only_dave = api.get("/api/audit", {"actor": "dave"}, **admin).json()
    assert only_dave["total"] == 1 and only_dave["events"][0]["resource"] == "pools/db"
    assert api.get("/api/audit", {"action": "dag.created"}, **admin).json()["total"] == 1
    assert api.get("/api/audit", {"resource": "tasks/extract"}, **admin).json()["total"] == 1
    page = api.get("/api/audit", {"limit": 1, "offset": 1}, **admin).json()
    assert len(page["events"]) == 1 and page["events"][0]["id"] == body["events"][1]["id"]
    assert api.get("/api/audit", {"limit": 501}, **admin).status_code == 400


def test_verify_reports_valid_then_tampering_is_refused_or_detected(api, admin):
    make_definitions(api, admin)
    assert api.get("/api/audit/verify", **admin).json() == {
        "status": "valid",
        "entries_checked": AuditEvent.objects.count(),
        "first_invalid": None,
        "errors": [],
        "checkpoints": {
            "mode": "full",
            "checked": 0,
            "valid": True,
            "verified_from": 0,
            "first_invalid": None,
        },
    }
    victim = last_event("dag.created")
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE orch_audit_auditevent SET actor = 'mallory' WHERE id = %s", [victim.id])
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM orch_audit_auditevent WHERE id = %s", [victim.id])
    # A superuser can switch triggers off for its session; verification still catches the change.
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        try:
            cursor.execute("UPDATE orch_audit_auditevent SET actor = 'mallory' WHERE id = %s", [victim.id])
        finally:
            cursor.execute("SET session_replication_role = DEFAULT")
    assert api.get("/api/audit/verify", **admin).json()["status"] == "invalid"
    assert api.get("/api/audit/verify", **admin).json()["first_invalid"] == str(victim.id)


def test_export_streams_csv_and_json_oldest_first(api, admin):
    make_definitions(api, admin)
    response = api.get("/api/audit/export", {"format": "json"}, **admin)
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    rows = json.loads(b"".join(response.streaming_content))
    assert [r["action"] for r in rows] == ["api_key.created", "task.created", "dag.created"]
    response = api.get("/api/audit/export", {"format": "csv"}, **admin)
    assert response["Content-Type"].startswith("text/csv")
    table = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [r["resource"] for r in table] == ["api-keys/ops-admin", "tasks/extract", "dags/etl"]
    assert table[2]["previousHash"] == rows[1]["hash"] == table[1]["hash"]
    assert api.get("/api/audit/export", {"format": "xml"}, **admin).status_code == 400


@pytest.mark.parametrize("path", ["/api/audit", "/api/audit/verify", "/api/audit/export"])
def test_only_admins_may_read_the_trail(api, settings, path):
    settings.ORCH_SECURITY_ENABLED = True
    assert api.get(path).status_code == 401
    assert api.get(path, **api_key_headers("viewer")).status_code == 403
    assert api.get(path, **api_key_headers("operator")).status_code == 403
    assert api.get(path, **bearer("operator")).status_code == 403
    assert api.get(path, **api_key_headers("admin")).status_code == 200
