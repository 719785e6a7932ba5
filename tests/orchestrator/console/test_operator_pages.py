"""The operator's console pages (issue #28): schedules, the grid, the Gantt and durations, bulk
actions on runs, log download, agents that stopped or are retired, preferences (time zone, theme).
Each new page and action for each role (admin / operator / viewer / anonymous), through the test
client; the browser flows are in test_browser.py."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from django.utils import timezone

from orchestrator.agents.models import Agent
from orchestrator.agents.services import agent_heartbeat, agent_stopped
from orchestrator.audit.models import AuditEvent
from orchestrator.runs.models import Run, TaskLogLine, TaskRun
from orchestrator.runs.planning import ScheduleOptions
from orchestrator.runs.services import run_schedule_dag
from orchestrator.schedules.models import Schedule
from orchestrator.schedules.services import ScheduleSpec, schedule_create
from tests.orchestrator.console.conftest import signed_in

pytestmark = pytest.mark.django_db


def finished(run_id: str, status: str, failed_task: str | None = None) -> None:
    """A run as agents leave it (the executing path is covered by the browser tests)."""
    now = timezone.now()
    Run.objects.filter(pk=run_id).update(status=status, end_time=now)
    TaskRun.objects.filter(run_id=run_id).update(
        status="completed", start_time=now - timedelta(seconds=90), end_time=now, exit_code=0
    )
    if failed_task:
        TaskRun.objects.filter(run_id=run_id, task_id=failed_task).update(status="failed", exit_code=3)


@pytest.fixture
def runs(etl) -> list[str]:
    return [
        run_schedule_dag(dag_id=etl, options=ScheduleOptions(run_id=f"etl-{i}"))[0].run_id for i in range(3)
    ]


@pytest.fixture
def schedule(etl) -> Schedule:
    return schedule_create(
        schedule_id="nightly-etl", spec=ScheduleSpec(dag_id=etl, cron="30 2 * * *", timezone="Europe/Berlin")
    )


def reads(runs: list[str], schedule: Schedule) -> list[str]:
    task_run = TaskRun.objects.filter(run_id=runs[0]).order_by("id").first()
    return [
        "/console/schedules",
        f"/console/schedules/{schedule.id}",
        "/console/schedules/preview?cron=0+*+*+*+*&timezone=UTC",
        "/console/grid",
        "/console/grid?dag_id=etl",
        f"/console/task-runs/{task_run.id}/log.txt",
        "/console/preferences",
    ]


def test_anonymous_visitors_are_sent_to_sign_in_for_every_new_page_and_action(runs, schedule):
    agent_heartbeat(agent_id="calm@host", queues=["default"], tags=[])
    agent_stopped(agent_id="calm@host")
    client = Client()
    posts = [
        ("/console/runs/bulk", {"action": "cancel", "run": runs, "confirmed": "yes"}),
        ("/console/schedules/new", {"target": "dag:etl", "cron": "0 * * * *"}),
        (f"/console/schedules/{schedule.id}/edit", {"target": "dag:etl", "cron": "0 * * * *"}),
        (f"/console/schedules/{schedule.id}/pause", {}),
        (f"/console/schedules/{schedule.id}/delete", {}),
        ("/console/agents/calm@host/retire", {}),
        ("/console/preferences", {"timezone": "UTC", "theme": "dark", "language": "en"}),
    ]
    for url in reads(runs, schedule):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/console/login?next="), url
    for url, data in posts:
        response = client.post(url, data)
        assert response.status_code == 302 and response["Location"].startswith("/console/login?next="), url
    assert set(Run.objects.values_list("status", flat=True)) == {"pending"}
    assert Schedule.objects.get().paused is False and Agent.objects.filter(pk="calm@host").exists()


def test_a_viewer_reads_every_new_page_but_changes_nothing(users, runs, schedule):
    agent_heartbeat(agent_id="calm@host", queues=["default"], tags=[])
    agent_stopped(agent_id="calm@host")
    client = signed_in(users["viewer"])
    for url in reads(runs, schedule):
        response = client.get(url)
        assert response.status_code == 200, url
        if response["Content-Type"].startswith("text/html"):
            page = response.content.decode()
            assert not re.search(r">\s*None\s*<|\{#|#\}", page), url
    assert b"New schedule" not in client.get("/console/schedules").content
    assert b'name="action"' not in client.get("/console/").content  # no bulk actions
    assert b"Retire" not in client.get("/console/agents").content
    refused = [
        ("/console/runs/bulk", {"action": "cancel", "run": runs, "confirmed": "yes"}),
        ("/console/schedules/new", {"target": "dag:etl", "cron": "0 * * * *"}),
        (f"/console/schedules/{schedule.id}/edit", {"target": "dag:etl", "cron": "0 * * * *"}),
        (f"/console/schedules/{schedule.id}/pause", {}),
        (f"/console/schedules/{schedule.id}/delete", {}),
        ("/console/agents/calm@host/retire", {}),
    ]
    for url, data in refused:
        assert client.post(url, data).status_code == 403, url
    assert client.get("/console/schedules/new").status_code == 403
    assert set(Run.objects.values_list("status", flat=True)) == {"pending"}
    assert Schedule.objects.get().paused is False and Agent.objects.filter(pk="calm@host").exists()


def test_an_operator_pauses_schedules_but_only_an_admin_creates_edits_or_deletes_them(users, schedule):
    operator = signed_in(users["operator"])
    assert operator.post(f"/console/schedules/{schedule.id}/pause", {"paused": "true"}).status_code == 302
    assert Schedule.objects.get().paused is True
    assert "paused" in operator.get(f"/console/schedules/{schedule.id}").content.decode()
    assert operator.post(f"/console/schedules/{schedule.id}/pause", {"paused": "false"}).status_code == 302
    assert Schedule.objects.get().paused is False
    for url in ("/console/schedules/new", f"/console/schedules/{schedule.id}/edit"):
        assert operator.get(url).status_code == 403
        assert operator.post(url, {"target": "dag:etl", "cron": "0 * * * *"}).status_code == 403
    assert operator.post(f"/console/schedules/{schedule.id}/delete").status_code == 403
    actions = list(AuditEvent.objects.filter(actor="operator-user").values_list("action", flat=True))
    assert actions == ["schedule.paused", "schedule.resumed"]


def test_an_admin_creates_a_schedule_from_the_form_and_sees_its_next_fire_times(users, etl):
    admin = signed_in(users["admin"])
    form = admin.get("/console/schedules/new?target=dag:etl").content.decode()
    assert '<option value="dag:etl" selected>' in form and 'id="preview-times"' in form
    response = admin.post(
        "/console/schedules/new",
        {"id": "etl-at-0230", "target": "dag:etl", "timing": "cron", "cron": "30 2 * * *",
         "timezone": "Europe/Berlin", "parameters": "transform.MODE=fast", "catchup": "none",
         "max_catchup": "3", "priority": "2"},
    )  # fmt: skip
    assert response.status_code == 302 and response["Location"] == "/console/schedules/etl-at-0230"
    created = Schedule.objects.get()
    assert (created.dag_id, created.cron, created.timezone, created.catchup, created.priority) == (
        "etl", "30 2 * * *", "Europe/Berlin", "none", 2,
    )  # fmt: skip
    assert created.parameters == {"transform.MODE": "fast"}
    page = admin.get("/console/schedules/etl-at-0230").content.decode()
    upcoming = page.split('id="upcoming"')[1].split("</table>")[0]
    in_berlin = re.findall(r"<time [^>]*>([^<]*)<span class=\"zone\">(CES?T)</span>", upcoming)
    assert len(in_berlin) == 5 and all("2:30" in shown for shown, _ in in_berlin)  # in the schedule's zone
    assert "Schedule etl-at-0230 created." in page
    listed = admin.get("/console/schedules").content.decode()
    assert "etl-at-0230" in listed and "30 2 * * *" in listed
    assert AuditEvent.objects.get(action="schedule.created").actor == "admin-user"


def test_the_form_says_what_is_wrong_in_words_and_saves_nothing(users, etl):
    admin = signed_in(users["admin"])
    response = admin.post(
        "/console/schedules/new",
        {"target": "", "timing": "cron", "cron": "61 * * *", "timezone": "Mars/Olympus", "priority": "high"},
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "Choose the DAG or task the schedule runs." in page
    assert "unknown time zone" in page and "priority" in page
    assert 'value="61 * * *"' in page  # what was typed is kept
    assert not Schedule.objects.exists()


def test_the_preview_shows_the_next_five_fire_times_in_the_chosen_zone(users):
    viewer = signed_in(users["viewer"])
    page = viewer.get(
        "/console/schedules/preview",
        {"timing": "cron", "cron": "0 9 * * 1-5", "timezone": "America/New_York"},
    ).content.decode()
    times = re.findall(r"<li><time [^>]*>([^<]+)<span class=\"zone\">(E[SD]T)</span></time></li>", page)
    assert len(times) == 5 and all("9 a.m." in shown for shown, _ in times), page
    interval = viewer.get("/console/schedules/preview", {"timing": "interval", "interval_seconds": "0"})
    assert "Enter a whole number of seconds of at least 1." in interval.content.decode()
    bad = viewer.get("/console/schedules/preview", {"timing": "cron", "cron": "every day"}).content.decode()
    assert "cron must have 5 fields" in bad


def test_an_admin_edits_and_deletes_a_schedule_and_its_runs_stay(users, schedule):
    run_schedule_dag(dag_id="etl", options=ScheduleOptions(run_id="made-by-it"))
    Run.objects.filter(pk="made-by-it").update(schedule_id=schedule.id, fire_time=timezone.now())
    admin = signed_in(users["admin"])
    form = admin.get(f"/console/schedules/{schedule.id}/edit").content.decode()
    assert 'value="30 2 * * *"' in form and 'value="Europe/Berlin"' in form
    assert "made-by-it" in admin.get(f"/console/schedules/{schedule.id}").content.decode()
    response = admin.post(
        f"/console/schedules/{schedule.id}/edit",
        {"target": "dag:etl", "timing": "interval", "interval_seconds": "900", "timezone": "UTC"},
    )
    assert response.status_code == 302
    assert (Schedule.objects.get().cron, Schedule.objects.get().interval_seconds) == (None, 900)
    assert admin.post(f"/console/schedules/{schedule.id}/delete").status_code == 302
    assert not Schedule.objects.exists() and Run.objects.filter(pk="made-by-it").exists()
    actions = list(AuditEvent.objects.filter(actor="admin-user").values_list("action", flat=True))
    assert actions == ["schedule.updated", "schedule.deleted"]


def test_bulk_actions_confirm_naming_how_many_then_act_on_each(users, runs):
    operator = signed_in(users["operator"])
    asked = operator.post(
        "/console/runs/bulk", {"action": "cancel", "run": runs[:2], "next": "/console/?status=pending"}
    )
    assert asked.status_code == 200
    page = asked.content.decode()
    assert "Cancel 2 runs?" in page and "Yes, 2 runs" in page
    assert set(Run.objects.values_list("status", flat=True)) == {"pending"}  # nothing yet
    done = operator.post(
        "/console/runs/bulk",
        {"action": "cancel", "run": runs[:2], "confirmed": "yes", "next": "/console/?status=pending"},
    )
    assert done.status_code == 302 and done["Location"] == "/console/?status=pending"
    assert dict(Run.objects.values_list("run_id", "status")) == {
        runs[0]: "cancelled", runs[1]: "cancelled", runs[2]: "pending",
    }  # fmt: skip
    assert "2 runs cancelled." in operator.get("/console/").content.decode()
    assert AuditEvent.objects.filter(action="run.cancelled", actor="operator-user").count() == 2


def test_bulk_rerun_of_failed_runs_reports_the_ones_it_cannot_rerun(users, runs):
    finished(runs[0], "failed", failed_task="load")
    finished(runs[1], "failed", failed_task="transform")
    operator = signed_in(users["operator"])
    response = operator.post(
        "/console/runs/bulk", {"action": "rerun-failed", "run": runs, "confirmed": "yes"}, follow=True
    )
    page = response.content.decode()
    assert "2 reruns started." in page and f"{runs[2]}: Run {runs[2]} is still pending" in page
    reruns = dict(Run.objects.filter(original_run__isnull=False).values_list("original_run_id", "run_id"))
    assert set(reruns) == {runs[0], runs[1]}
    executed = {
        t for t, carried in TaskRun.objects.filter(run_id=reruns[runs[0]]).values_list("task_id", "carried_from")
        if carried is None
    }  # fmt: skip
    assert executed == {"load"}


def test_only_an_admin_deletes_runs_and_only_finished_ones(users, runs):
    finished(runs[0], "completed")
    finished(runs[1], "failed", failed_task="load")
    data = {"action": "delete", "run": runs, "confirmed": "yes"}
    assert signed_in(users["operator"]).post("/console/runs/bulk", data).status_code == 403
    admin = signed_in(users["admin"])
    question = admin.post("/console/runs/bulk", {"action": "delete", "run": runs}).content.decode()
    assert "Delete 3 runs with their task runs and output? This cannot be undone." in question
    page = admin.post("/console/runs/bulk", data, follow=True).content.decode()
    assert "2 runs deleted." in page and f"Run {runs[2]} is still pending" in page
    assert list(Run.objects.values_list("run_id", flat=True)) == [runs[2]]
    assert not TaskRun.objects.filter(run_id__in=runs[:2]).exists()
    assert AuditEvent.objects.filter(action="run.deleted", actor="admin-user").count() == 2


def test_the_grid_shows_runs_by_task_oldest_left(users, runs):
    finished(runs[0], "failed", failed_task="load")
    finished(runs[1], "completed")
    page = signed_in(users["viewer"]).get("/console/grid?dag_id=etl").content.decode()
    grid = page.split('<table class="grid">')[1].split("</table>")[0]
    rows = re.findall(r'<th scope="row">([^<]+)</th>(.*?)</tr>', grid)
    assert [task for task, _ in rows] == ["extract", "load", "transform"]  # the graph's order
    load = re.findall(r'data-status="(\w+)"', dict(rows)["load"])
    assert load == ["failed", "completed", "pending"]  # etl-0 first (oldest), etl-2 last
    assert signed_in(users["viewer"]).get("/console/grid?dag_id=ghost").status_code == 404


def test_the_dag_list_counts_every_task_a_run_executes(users, etl):
    page = signed_in(users["viewer"]).get("/console/dags").content.decode()
    assert '<td data-label="Tasks">3</td>' in page  # transform and load name extract


def test_an_empty_list_says_so_without_template_text(users, etl):
    page = signed_in(users["viewer"]).get("/console/").content.decode()
    assert "Nothing to show" in page and "No runs yet" in page
    assert not re.search(r">\s*None\s*<", page)


def test_the_run_page_keeps_its_order_shows_durations_and_a_timeline(users, runs):
    client = signed_in(users["viewer"])

    def order() -> list[str]:
        live = client.get(f"/console/runs/{runs[0]}/live").content.decode()
        return re.findall(r'data-node="[^"]+" data-status="\w+" aria-label="([^:]+):', live)

    before = order()
    TaskRun.objects.filter(run_id=runs[0], task_id="transform").update(
        status="running", start_time=timezone.now() - timedelta(seconds=5)
    )
    TaskRun.objects.filter(run_id=runs[0], task_id="extract").update(
        status="completed", start_time=timezone.now()
    )
    assert order() == before and before[0] == "extract"
    finished(runs[0], "completed")
    page = client.get(f"/console/runs/{runs[0]}").content.decode()
    assert "1 min 30 s" in page  # each task run's duration
    assert page.count('class="bar status-completed"') == 3


def test_the_log_downloads_whole(users, runs):
    task_run = TaskRun.objects.filter(run_id=runs[0]).order_by("id").first()
    TaskLogLine.objects.bulk_create(
        [TaskLogLine(task_run=task_run, at=timezone.now(), line=f"line {i}") for i in range(3)]
    )
    response = signed_in(users["viewer"]).get(f"/console/task-runs/{task_run.id}/log.txt")
    assert response["Content-Disposition"] == f'attachment; filename="{task_run.id}.log"'
    assert response.content.decode() == "line 0\nline 1\nline 2\n"


def test_a_stopped_agent_shows_as_stopped_and_an_operator_retires_it(users):
    agent_heartbeat(agent_id="live@host", queues=["default"], tags=[])
    agent_heartbeat(agent_id="calm@host", queues=["default"], tags=[])
    agent_stopped(agent_id="calm@host")
    operator = signed_in(users["operator"])
    page = operator.get("/console/agents").content.decode()
    assert "stopped" in page and page.count(">Retire</button>") == 1  # not for the live one
    assert operator.post("/console/agents/live@host/retire").status_code == 409
    response = operator.post("/console/agents/calm@host/retire", follow=True)
    assert "Agent calm@host retired." in response.content.decode()
    assert list(Agent.objects.values_list("pk", flat=True)) == ["live@host"]
    assert AuditEvent.objects.get(action="agent.retired").actor == "operator-user"


def test_preferences_set_the_time_zone_and_theme_of_every_page(users, runs):
    client = signed_in(users["viewer"])
    Run.objects.filter(pk=runs[0]).update(start_time=datetime(2026, 7, 1, 12, 0, tzinfo=UTC))
    shown = re.compile(r'<time datetime="2026-07-01T12:00:00\+00:00">([^<]*)<span class="zone">(\w+)</span>')
    assert shown.search(client.get(f"/console/runs/{runs[0]}").content.decode()).groups() == (
        "07/01/2026 noon ",
        "UTC",
    )
    refused = client.post("/console/preferences", {"timezone": "Nowhere", "theme": "neon", "language": "xx"})
    assert refused.status_code == 400 and "Choose a time zone from the list" in refused.content.decode()
    saved = client.post(
        "/console/preferences", {"timezone": "Europe/Berlin", "theme": "dark", "language": "en"}
    )
    assert saved.status_code == 302
    page = client.get(f"/console/runs/{runs[0]}").content.decode()
    assert shown.search(page).groups() == ("07/01/2026 2 p.m. ", "CEST")
    assert 'data-scheme="dark"' in page and 'data-time-zone="Europe/Berlin"' in page


def test_the_demo_dag_lists_its_four_tasks_and_its_grid_shows_three_runs(users):
    from orchestrator.console.management.commands.ensure_console_admin import create_demo_dag

    create_demo_dag()  # as make run does on an empty orchestrator
    client = signed_in(users["viewer"])
    assert '<td data-label="Tasks">4</td>' in client.get("/console/dags").content.decode()  # was "1"
    for i in range(3):
        run_schedule_dag(dag_id="demo", options=ScheduleOptions(run_id=f"demo-{i}"))
    finished("demo-1", "failed", failed_task="demo-check")
    page = client.get("/console/grid?dag_id=demo").content.decode()
    grid = page.split('<table class="grid">')[1].split("</table>")[0]
    rows = dict(re.findall(r'<th scope="row">([^<]+)</th>(.*?)</tr>', grid))
    assert list(rows)[0] == "demo-fetch" and list(rows)[-1] == "demo-report" and len(rows) == 4
    assert re.findall(r'data-status="(\w+)"', rows["demo-check"]) == ["pending", "failed", "pending"]
    assert grid.count('class="duration-bar') == 3
