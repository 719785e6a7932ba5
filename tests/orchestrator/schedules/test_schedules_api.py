"""/api/schedules: create, read, replace, delete, pause and resume; validation; the role matrix;
the next-fire-times preview in a time zone; schedule_id and fire_time on runs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from orchestrator.schedules.firing import schedules_tick
from orchestrator.schedules.models import Schedule
from tests.orchestrator.helpers import assert_error, put_dag, put_task
from tests.orchestrator.security.helpers import api_key_headers

pytestmark = pytest.mark.django_db


@pytest.fixture
def targets(api):
    put_task(api, "sched_extract", "echo extract")
    put_task(api, "sched_load", "echo load $TARGET", dependencies=["sched_extract"])
    put_dag(api, "sched_dag", [{"id": "sched_extract"}, {"id": "sched_load"}])


def create(api, status: int = 201, **body):
    response = api.post("/api/schedules", body, format="json")
    assert response.status_code == status, response.content
    return response.json()


def parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def test_create_read_list_replace_delete(api, targets):
    body = create(
        api,
        id="nightly",
        dag_id="sched_dag",
        cron="30 2 * * *",
        timezone="Europe/Berlin",
        parameters={"sched_load.TARGET": "warehouse"},
        priority=5,
    )
    assert body["id"] == "nightly" and body["dag_id"] == "sched_dag" and body["task_id"] is None
    assert body["catchup"] == "latest" and body["max_catchup"] == 10 and body["paused"] is False
    assert body["priority"] == 5 and body["last_fire_time"] is None and body["timezone"] == "Europe/Berlin"
    assert len(body["next_fire_times"]) == 5 and all(t.endswith("Z") for t in body["next_fire_times"])
    assert api.get("/api/schedules/nightly").json() == body

    other = create(api, task_id="sched_load", interval_seconds=60, catchup="all", max_catchup=3)
    assert other["id"].startswith("sch_")
    listed = api.get("/api/schedules").json()
    assert listed["total"] == 2 and listed["limit"] == 50 and listed["offset"] == 0
    assert [s["id"] for s in listed["schedules"]] == [other["id"], "nightly"]  # newest first
    assert [s["id"] for s in api.get("/api/schedules", {"dag_id": "sched_dag"}).json()["schedules"]] == [
        "nightly"
    ]

    replaced = api.put(
        "/api/schedules/nightly", {"dag_id": "sched_dag", "interval_seconds": 3600}, format="json"
    )
    assert replaced.status_code == 200, replaced.content
    assert replaced.json()["cron"] is None and replaced.json()["interval_seconds"] == 3600
    assert replaced.json()["parameters"] == {} and replaced.json()["priority"] == 0  # a full replace
    gaps = {
        parse(b) - parse(a)
        for a, b in zip(
            replaced.json()["next_fire_times"], replaced.json()["next_fire_times"][1:], strict=False
        )
    }
    assert gaps == {timedelta(hours=1)}

    deleted = api.delete("/api/schedules/nightly")
    assert deleted.status_code == 200 and deleted.json()["success"] is True
    assert_error(api.get("/api/schedules/nightly"), 404, "not_found")
    assert_error(api.delete("/api/schedules/nightly"), 404, "not_found")


def test_preview_in_berlin_across_the_spring_change(api, targets):
    body = create(
        api,
        dag_id="sched_dag",
        cron="30 2 * * *",
        timezone="Europe/Berlin",
        start_date="2026-03-27T00:00:00Z",
        end_date="2026-03-30T23:00:00Z",
    )
    # Read at a moment before the start date: the preview is bounded by start and end dates.
    schedule = Schedule.objects.get(pk=body["id"])
    from orchestrator.schedules.selectors import next_fire_times

    times = next_fire_times(schedule, now=datetime(2026, 3, 1, tzinfo=UTC))
    assert [t.isoformat() for t in times] == [
        "2026-03-27T01:30:00+00:00",  # CET
        "2026-03-28T01:30:00+00:00",
        "2026-03-29T01:00:00+00:00",  # 02:30 does not exist: 03:00 CEST
        "2026-03-30T00:30:00+00:00",  # CEST
    ]


def test_duplicate_id_is_409(api, targets):
    create(api, id="dup", dag_id="sched_dag", interval_seconds=60)
    assert_error(
        api.post(
            "/api/schedules", {"id": "dup", "dag_id": "sched_dag", "interval_seconds": 5}, format="json"
        ),
        409,
        "already_exists",
        field="id",
    )


BAD_BODIES = [
    ({"interval_seconds": 60}, "dag_id"),
    ({"dag_id": "sched_dag", "task_id": "sched_load", "interval_seconds": 60}, "dag_id"),
    ({"dag_id": "sched_dag"}, "cron"),
    ({"dag_id": "sched_dag", "cron": "* * * * *", "interval_seconds": 60}, "cron"),
    ({"dag_id": "sched_dag", "cron": "0 0 * *"}, "cron"),
    ({"dag_id": "sched_dag", "cron": "0 25 * * *"}, "cron"),
    ({"dag_id": "sched_dag", "cron": "0 0 * * *", "timezone": "Mars/Olympus"}, "timezone"),
    ({"dag_id": "sched_dag", "interval_seconds": 0}, "interval_seconds"),
    ({"dag_id": "sched_dag", "interval_seconds": "often"}, "interval_seconds"),
    ({"dag_id": "sched_dag", "interval_seconds": 60, "catchup": "some"}, "catchup"),
    ({"dag_id": "sched_dag", "interval_seconds": 60, "max_catchup": 0}, "max_catchup"),
    ({"dag_id": "sched_dag", "interval_seconds": 60, "start_date": "yesterday"}, "start_date"),
    (
        {"dag_id": "sched_dag", "interval_seconds": 60, "start_date": "2026-05-02", "end_date": "2026-05-01"},
        "end_date",
    ),
    ({"dag_id": "sched_dag", "interval_seconds": 60, "id": "../etc"}, "id"),
    ({"dag_id": "sched_dag", "interval_seconds": 60, "priority": "high"}, "priority"),
    ({"dag_id": "sched_dag", "interval_seconds": 60, "context": "no_such_context"}, "context"),
    ({"dag_id": "sched_dag", "interval_seconds": 60, "parameters": {"TARGET": "x"}}, "parameters.TARGET"),
    ({"dag_id": "sched_dag", "interval_seconds": 60, "parameters": {"other.X": "x"}}, "parameters.other.X"),
    ({"dag_id": 7, "interval_seconds": 60}, "dag_id"),
]


@pytest.mark.parametrize(("body", "field"), BAD_BODIES, ids=[f for _, f in BAD_BODIES])
def test_bad_bodies_are_400_naming_the_field(api, targets, body, field):
    assert_error(api.post("/api/schedules", body, format="json"), 400, "validation_error", field=field)
    assert not Schedule.objects.exists()


def test_unknown_dag_or_task_is_404(api, targets):
    assert_error(
        api.post("/api/schedules", {"dag_id": "nope", "cron": "* * * * *"}, format="json"), 404, "not_found"
    )
    assert_error(
        api.post("/api/schedules", {"task_id": "nope", "interval_seconds": 9}, format="json"),
        404,
        "not_found",
    )
    create(api, id="keep", dag_id="sched_dag", interval_seconds=60)
    assert_error(
        api.put("/api/schedules/keep", {"dag_id": "nope", "interval_seconds": 60}, format="json"),
        404,
        "not_found",
    )
    assert_error(
        api.put("/api/schedules/missing", {"dag_id": "sched_dag", "interval_seconds": 60}, format="json"),
        404,
        "not_found",
    )


def test_pause_and_resume(api, targets):
    create(api, id="pausable", dag_id="sched_dag", interval_seconds=60)
    paused = api.post("/api/schedules/pausable/pause")
    assert paused.status_code == 200 and paused.json()["paused"] is True
    assert api.get("/api/schedules", {"paused": "true"}).json()["total"] == 1
    resumed = api.post("/api/schedules/pausable/resume")
    assert resumed.status_code == 200 and resumed.json()["paused"] is False
    assert_error(api.post("/api/schedules/missing/pause"), 404, "not_found")


def test_list_paging_bounds_are_400(api):
    assert_error(api.get("/api/schedules", {"limit": 501}), 400, "validation_error", field="limit")
    assert_error(api.get("/api/schedules", {"paused": "maybe"}), 400, "validation_error", field="paused")


def test_runs_record_schedule_and_fire_time_and_filter_by_schedule(api, targets):
    create(api, id="every-minute", task_id="sched_load", interval_seconds=60, priority=7)
    create(api, id="other", dag_id="sched_dag", interval_seconds=60)
    schedule = Schedule.objects.get(pk="every-minute")
    due = schedule.next_fire_time
    assert schedules_tick(now=due + timedelta(seconds=1)) == 2
    runs = api.get("/api/runs", {"schedule_id": "every-minute"}).json()
    assert runs["total"] == 1
    run = api.get(f"/api/runs/{runs['runs'][0]['run_id']}").json()
    assert run["schedule_id"] == "every-minute" and parse(run["fire_time"]) == due
    assert run["priority"] == 7  # the schedule's priority goes to every run it makes
    assert api.get("/api/schedules/every-minute").json()["last_run_id"] == run["run_id"]
    assert api.get("/api/runs", {"schedule_id": "nobody"}).json()["total"] == 0
    assert api.get("/api/runs").json()["total"] == 2
    # A run scheduled by hand names no schedule.
    manual = api.post("/api/schedule-task", {"task_id": "sched_extract"}, format="json").json()
    detail = api.get(f"/api/runs/{manual['run_id']}").json()
    assert detail["schedule_id"] is None and detail["fire_time"] is None


ROUTES = [
    ("GET", "/api/schedules", "viewer"),
    ("POST", "/api/schedules", "admin"),
    ("GET", "/api/schedules/matrix", "viewer"),
    ("PUT", "/api/schedules/matrix", "admin"),
    ("DELETE", "/api/schedules/matrix", "admin"),
    ("POST", "/api/schedules/matrix/pause", "operator"),
    ("POST", "/api/schedules/matrix/resume", "operator"),
]
RANK = {"viewer": 0, "operator": 1, "admin": 2}


@pytest.mark.parametrize(("method", "path", "needed"), ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_roles(api, settings, targets, method, path, needed):
    settings.ORCH_SECURITY_ENABLED = True
    call = getattr(api, method.lower())
    body = {"dag_id": "sched_dag", "interval_seconds": 60} if method in ("POST", "PUT") else None
    assert_error(call(path, body, format="json"), 401, "not_authenticated")
    keys = {role: api_key_headers(role) for role in RANK}
    for role in RANK:
        Schedule.objects.all().delete()
        create_as_admin(api, "matrix", keys["admin"])
        response = call(path, body, format="json", **keys[role])
        if RANK[role] < RANK[needed]:
            assert_error(response, 403, "permission_denied")
        else:
            assert response.status_code in (200, 201), (role, response.content)


def create_as_admin(api, schedule_id: str, headers: dict[str, str]) -> None:
    response = api.post(
        "/api/schedules",
        {"id": schedule_id, "dag_id": "sched_dag", "interval_seconds": 60},
        format="json",
        **headers,
    )
    assert response.status_code == 201, response.content
