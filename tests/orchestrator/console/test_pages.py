"""Console pages for each role and anonymous visitors: the API's role matrix (viewer reads,
operator schedules and cancels, admin purges), writes through the audited services, 404 pages for
unknown objects, the schedule form's messages. The orchestrator has no tenants, so there is no
other tenant to hide objects from."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from orchestrator.audit.models import AuditEvent
from orchestrator.definitions import services as definitions
from orchestrator.runs.models import Run, TaskRun
from orchestrator.runs.planning import ScheduleOptions
from orchestrator.runs.services import run_schedule_dag
from tests.orchestrator.console.conftest import PASSWORD, put_dag, put_task, signed_in
from tests.support.docs_page import assert_policy_first_party

pytestmark = pytest.mark.django_db


@pytest.fixture
def run_id(etl) -> str:
    run, _ = run_schedule_dag(dag_id=etl, options=ScheduleOptions(run_id="etl-run-1"))
    return run.run_id


def read_pages(run_id: str) -> list[str]:
    task_run = TaskRun.objects.filter(run_id=run_id).order_by("id").first()
    return [
        "/console/",
        "/console/?status=pending&dag_id=etl",
        f"/console/runs/{run_id}",
        f"/console/runs/{run_id}/live",
        f"/console/task-runs/{task_run.id}",
        "/console/dags",
        "/console/dags/etl",
        "/console/dags/etl?version=1",
        "/console/tasks",
        "/console/tasks/extract",
        "/console/agents",
        "/console/queues",
    ]


def writes(run_id: str) -> list[str]:
    return [
        "/console/dags/etl/schedule",
        "/console/tasks/extract/schedule",
        f"/console/runs/{run_id}/cancel",
        f"/console/runs/{run_id}/pause",
        f"/console/runs/{run_id}/resume",
        f"/console/runs/{run_id}/rerun",
        "/console/queues/default/purge",
    ]


def test_anonymous_is_sent_to_the_sign_in_page_and_changes_nothing(run_id):
    client = Client()
    for url in read_pages(run_id) + writes(run_id):
        response = client.post(url) if url in writes(run_id) else client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/console/login?next=%2Fconsole%2F"), url
    assert list(Run.objects.values_list("run_id", "status")) == [(run_id, "pending")]


def test_a_signed_out_poll_sends_the_whole_page_to_sign_in(run_id):
    response = Client().get(
        f"/console/runs/{run_id}/live?seen=pending",
        headers={"HX-Request": "true", "HX-Current-URL": f"http://testserver/console/runs/{run_id}"},
    )
    assert response.status_code == 204
    assert response["HX-Redirect"] == f"/console/login?next=%2Fconsole%2Fruns%2F{run_id}"


def test_sign_in_refuses_a_wrong_password_an_inactive_account_and_a_missing_csrf_token(users):
    viewer = users["viewer"]
    wrong = Client().post("/console/login", {"username": viewer.username, "password": "nope"})
    assert wrong.status_code == 401 and b"Invalid username or password." in wrong.content
    strict = Client(enforce_csrf_checks=True)
    assert (
        strict.post("/console/login", {"username": viewer.username, "password": PASSWORD}).status_code == 403
    )
    viewer.is_active = False
    viewer.save()
    inactive = Client().post("/console/login", {"username": viewer.username, "password": PASSWORD})
    assert inactive.status_code == 401


def test_sign_in_returns_to_the_page_asked_for_but_never_to_another_site(users):
    target = Client().post(
        "/console/login?next=/console/dags", {"username": "viewer-user", "password": PASSWORD}
    )
    assert target["Location"] == "/console/dags"
    away = Client().post(
        "/console/login?next=https://evil.example/", {"username": "viewer-user", "password": PASSWORD}
    )
    assert away["Location"] == "/console/"


def test_a_viewer_reads_every_page_with_the_policy_but_cannot_write(users, run_id):
    client = signed_in(users["viewer"])
    for url in read_pages(run_id):
        response = client.get(url)
        assert response.status_code == 200, url
        assert_policy_first_party(response["Content-Security-Policy"])
    assert b"Scheduling needs the operator role." in client.get("/console/dags/etl").content
    for url in writes(run_id):
        response = client.post(url)
        assert response.status_code == 403, url
        assert b"Requires the" in response.content
    assert Run.objects.count() == 1 and Run.objects.get().status == "pending"


def test_an_operator_schedules_a_dag_with_parameters_audited_under_their_name(users, etl):
    client = signed_in(users["operator"])
    response = client.post(
        "/console/dags/etl/schedule",
        {"p-extract-SOURCE": "files", "extra_parameters": "load.TARGET=warehouse", "priority": "5"},
    )
    assert response.status_code == 302, response.content
    run = Run.objects.get()
    assert response["Location"] == f"/console/runs/{run.run_id}"
    assert (run.dag_id, run.priority) == ("etl", 5)
    runs = {tr.task_id: tr for tr in run.task_runs.all()}
    assert runs["extract"].env["SOURCE"] == "files" and runs["load"].env["TARGET"] == "warehouse"
    event = AuditEvent.objects.get(action="run.scheduled")
    assert (event.actor, event.resource) == ("operator-user", f"runs/{run.run_id}")


def test_a_parameter_set_applies_unless_a_field_overrides_it(users, etl):
    definitions.parameter_set_put(parameter_set_id="nightly", parameters={"extract.SOURCE": "lake"})
    client = signed_in(users["operator"])
    assert b'<option value="nightly">nightly</option>' in client.get("/console/dags/etl").content
    client.post("/console/dags/etl/schedule", {"parameter_set": "nightly"})
    client.post("/console/dags/etl/schedule", {"parameter_set": "nightly", "p-extract-SOURCE": "api"})
    sources = [
        TaskRun.objects.get(run=run, task_id="extract").env["SOURCE"]
        for run in Run.objects.order_by("start_time")
    ]
    assert sources == ["lake", "api"]


def test_a_scheduled_task_takes_plain_parameters_and_a_queue(users, etl):
    client = signed_in(users["operator"])
    response = client.post("/console/tasks/extract/schedule", {"p-SOURCE": "s3", "queue": "other"})
    assert response.status_code == 302, response.content
    task_run = TaskRun.objects.get(task_id="extract")
    assert (task_run.env["SOURCE"], task_run.queue) == ("s3", "other")


def test_the_form_shows_each_problem_and_schedules_nothing(users, etl):
    client = signed_in(users["operator"])
    response = client.post(
        "/console/dags/etl/schedule",
        {"extra_parameters": "nodot=1\nnot a pair", "priority": "high", "p-extract-SOURCE": "x"},
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "line 2 must be KEY=value" in page and "priority must be an integer" in page
    assert 'value="x"' in page  # what was typed is kept
    unknown = client.post("/console/dags/etl/schedule", {"extra_parameters": "ghost.X=1"})
    assert unknown.status_code == 400 and "task ghost is not part of this run" in unknown.content.decode()
    taken = client.post("/console/dags/etl/schedule", {"run_id": "bad id!"})
    assert taken.status_code == 400 and "run_id" in taken.content.decode()
    assert not Run.objects.exists()


def test_unknown_objects_are_404_pages(users, etl):
    client = signed_in(users["admin"])
    for url in ("/console/runs/nope", "/console/task-runs/nope", "/console/dags/nope", "/console/tasks/nope",
                "/console/dags/etl?version=9", "/console/runs/nope/live"):  # fmt: skip
        response = client.get(url)
        assert response.status_code == 404, url
        assert b"Not available" in response.content
    assert client.post("/console/dags/nope/schedule").status_code == 404
    assert client.get("/console/dags/etl?version=x").status_code == 400
    assert client.get("/console/?status=bogus").status_code == 400
    assert client.get("/console/?limit=9999").status_code == 400


def test_the_run_graph_is_layered_and_polls_only_while_the_run_is_open(users, run_id):
    client = signed_in(users["viewer"])
    live = client.get(f"/console/runs/{run_id}/live").content.decode()
    assert 'hx-trigger="every 1s"' in live
    nodes = re.findall(r'<rect x="(\d+)" y="\d+" width="170"[^>]*/>\s*<text[^>]*>(\w+)<', live)
    columns = {label: int(x) for x, label in nodes}
    assert columns["extract"] < columns["transform"] == columns["load"]  # extract before both
    assert live.count('class="edge"') == 2
    assert 'data-status="pending"' in live
    Run.objects.filter(pk=run_id).update(status="completed")
    TaskRun.objects.filter(run_id=run_id).update(status="completed")
    done = client.get(f"/console/runs/{run_id}/live").content.decode()
    assert "hx-trigger" not in done and done.count('data-status="completed"') == 3


def test_a_status_change_is_announced_once(users, run_id):
    client = signed_in(users["viewer"])
    page = client.get(f"/console/runs/{run_id}").content.decode()
    assert 'id="run-announce" class="visually-hidden" role="status"' in page and "hx-swap-oob" not in page
    assert '/live?seen=pending"' in page  # the next poll says what the page shows
    same = client.get(f"/console/runs/{run_id}/live?seen=pending").content.decode()
    assert "hx-swap-oob" not in same
    changed = client.get(f"/console/runs/{run_id}/live?seen=running").content.decode()
    assert '<span id="run-announce" hx-swap-oob="innerHTML">Run pending.</span>' in changed


def test_an_operator_pauses_resumes_and_reruns_a_run(users, run_id):
    client = signed_in(users["operator"])
    assert b'id="action-pause"' in client.get(f"/console/runs/{run_id}").content
    assert client.post(f"/console/runs/{run_id}/pause").status_code == 302
    assert Run.objects.get(pk=run_id).status == "paused"
    assert b'id="action-resume"' in client.get(f"/console/runs/{run_id}").content
    assert client.post(f"/console/runs/{run_id}/resume").status_code == 302
    assert Run.objects.get(pk=run_id).status != "paused"
    assert client.post(f"/console/runs/{run_id}/rerun").status_code == 409  # not finished yet
    Run.objects.filter(pk=run_id).update(status="failed")
    TaskRun.objects.filter(run_id=run_id).update(status="completed")
    TaskRun.objects.filter(run_id=run_id, task_id="load").update(status="failed")
    assert b"Rerun failed tasks" in client.get(f"/console/runs/{run_id}").content
    response = client.post(f"/console/runs/{run_id}/rerun", {"failed_only": "true"})
    assert response.status_code == 302
    rerun = Run.objects.get(original_run_id=run_id)
    assert response["Location"] == f"/console/runs/{rerun.run_id}"
    carried = dict(TaskRun.objects.filter(run=rerun).values_list("task_id", "carried_from"))
    assert set(carried) == {"extract", "load"}  # the failed task and the upstream it needs
    assert carried["load"] is None and carried["extract"]  # extract's result is carried over
    actions = set(AuditEvent.objects.filter(actor="operator-user").values_list("action", flat=True))
    assert {"run.paused", "run.resumed", "run.rerun"} <= actions


def test_an_operator_cancels_a_run(users, run_id):
    client = signed_in(users["operator"])
    assert client.post(f"/console/runs/{run_id}/cancel").status_code == 302
    assert Run.objects.get().status == "cancelled"
    assert AuditEvent.objects.get(action="run.cancelled").actor == "operator-user"


def test_only_an_admin_purges_a_queue(users, etl):
    run_schedule_dag(dag_id=etl, options=ScheduleOptions())
    TaskRun.objects.filter(task_id="extract").update(status="queued")
    assert signed_in(users["operator"]).post("/console/queues/default/purge").status_code == 403
    response = signed_in(users["admin"]).post("/console/queues/default/purge")
    assert response.status_code == 200 and b"Queue default purged (1 task runs)." in response.content
    assert AuditEvent.objects.get(action="queue.purged").actor == "admin-user"


def test_versions_are_listed_and_an_earlier_one_is_shown(users, etl):
    put_task("extract", "echo extract v2", parameters={"SOURCE": "db"})
    put_dag("etl", ["transform", "load"], tags=["nightly", "v2"])
    client = signed_in(users["viewer"])
    task = client.get("/console/tasks/extract").content.decode()
    assert "Version 1" in task and "Version 2" in task and "echo extract v2" in task
    old = client.get("/console/tasks/extract?version=1").content.decode()
    assert "echo extract $SOURCE" in old and "version 1" in old
    dag = client.get("/console/dags/etl?version=1").content.decode()
    # Version 1's tags, not version 2's (the whole page may hold "v2" by chance: a CSRF token).
    assert "<dt>Tags</dt><dd>nightly</dd>" in dag, dag


def test_agents_and_queues_pages_list_what_there_is(users, etl):
    from orchestrator.agents.models import Agent
    from shared.api.time import now_ms

    Agent.objects.create(agent_id="a1@host", queues=["default"], tags=["zone:x"], started_at=now_ms(),
                         last_heartbeat=now_ms())  # fmt: skip
    client = signed_in(users["viewer"])
    agents = client.get("/console/agents").content.decode()
    assert "a1@host" in agents and "live" in agents and "zone:x" in agents
    queues = client.get("/console/queues").content.decode()
    assert (
        '<td data-label="Queue">default</td><td data-label="Waiting">0</td><td data-label="Live agents">1</td>'
        in queues
    )


def test_runs_are_paged_and_filtered_with_links_that_keep_the_filters(users, etl):
    put_dag("other", ["extract"])
    for index in range(27):
        run_schedule_dag(dag_id=etl, options=ScheduleOptions(run_id=f"etl-{index:02d}"))
    run_schedule_dag(dag_id="other", options=ScheduleOptions(run_id="other-0"))
    client = signed_in(users["viewer"])
    first = client.get("/console/?dag_id=etl").content.decode()
    assert "1–25 of 27" in first and "other-0" not in first
    assert 'href="?dag_id=etl&amp;offset=25" rel="next"' in first and 'rel="prev"' not in first
    second = client.get("/console/?dag_id=etl&offset=25").content.decode()
    assert "26–27 of 27" in second and 'rel="next"' not in second
    assert second.count('href="/console/runs/etl-') == 2
    assert "other-0" in client.get("/console/?dag_id=other").content.decode()
    Run.objects.filter(pk="etl-03").update(status="failed")
    failed = client.get("/console/?status=failed").content.decode()
    assert "1–1 of 1" in failed and "etl-03" in failed


def test_the_nav_links_the_api_docs_which_a_signed_in_viewer_can_open(users, settings):
    settings.ORCH_SECURITY_ENABLED = True
    client = signed_in(users["viewer"])
    page = client.get("/console/dags").content.decode()
    assert re.search(
        r'<nav aria-label="Main">.*<a href="/docs" hx-boost="false">(<svg [^>]*>.*?</svg>)?API docs</a>',
        page,
        re.S,
    )
    assert client.get("/docs").status_code == 200
