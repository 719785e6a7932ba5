"""Run execution on SQLite, as `make run` does it: the portable claim (a conditional UPDATE in an
immediate transaction instead of PostgreSQL's one-statement claim), completions without the
one-statement leaf path, fan-in without row locks (SQLite has one writer at a time), and the
wakeups the filesystem broker carries to agents."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections
from rest_framework.test import APIClient

from orchestrator.events.models import Event
from orchestrator.runs import claim, executor, finish
from orchestrator.runs.models import Run, TaskRun
from shared.api.time import now_ms
from tests.orchestrator.helpers import progress, put_dag, put_task, run_detail, tasks_by_id
from tests.sqlite.threads import race

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def api() -> APIClient:
    return APIClient()


def schedule_dag(api: APIClient, dag_id: str) -> str:
    response = api.post("/api/schedule-dag", {"dag_id": dag_id}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["run_id"]


def task_run(run_id: str, task_id: str) -> TaskRun:
    return TaskRun.objects.get(run_id=run_id, task_id=task_id)


def events(run_id: str, type: str, task_id: str = "") -> int:
    found = Event.objects.filter(run_id=run_id, type=type)
    return found.filter(task_id=task_id).count() if task_id else found.count()


def wakeups_sent(task_run_id: str) -> int:
    """Messages the filesystem broker holds for this task run (what would wake an agent)."""
    folder = settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_out"]
    return sum(task_run_id in path.read_text(errors="replace") for path in Path(folder).glob("*.msg"))


def test_the_database_is_sqlite_with_immediate_transactions():
    connection = connections["default"]
    assert connection.vendor == "sqlite"
    assert connection.settings_dict["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"


def test_racing_claims_start_each_task_run_exactly_once(api):
    roots = [f"root{i}" for i in range(4)]
    for task in roots:
        put_task(api, task, "true")
    put_dag(api, "claims", roots)
    run_id = schedule_dag(api, "claims")
    for task in roots:
        tr = task_run(run_id, task)
        assert tr.status == "queued" and wakeups_sent(tr.id) == 1
        agents = [f"agent{i}@sqlite" for i in range(6)]
        results = race(
            [
                lambda a=a, tr=tr: claim.task_run_claim(task_run_id=tr.id, attempt=0, agent_id=a)
                for a in agents
            ]
        )
        won = [r for r in results if r is not None]
        assert len(won) == 1, results
        tr.refresh_from_db()
        assert tr.status == "running" and tr.attempts == 1 and won[0].attempt == 1
        assert tr.agent_id == agents[results.index(won[0])]
        assert events(run_id, "task.running", task) == 1
    assert run_detail(api, run_id)["status"] == "running"
    assert events(run_id, "dag.running") == 1


def test_a_stale_or_duplicate_message_claims_nothing(api):
    put_task(api, "once", "true")
    put_dag(api, "dupes", ["once"])
    run_id = schedule_dag(api, "dupes")
    tr = task_run(run_id, "once")
    assert claim.task_run_claim(task_run_id=tr.id, attempt=1, agent_id="a@x") is None  # from the future
    assert claim.task_run_claim(task_run_id=tr.id, attempt=0, agent_id="a@x") is not None
    assert claim.task_run_claim(task_run_id=tr.id, attempt=0, agent_id="b@x") is None  # redelivered
    tr.refresh_from_db()
    assert (tr.status, tr.attempts, tr.agent_id) == ("running", 1, "a@x")


def test_a_task_run_of_a_cancelled_run_is_never_claimed(api):
    put_task(api, "late", "true")
    put_dag(api, "cancelled", ["late"])
    run_id = schedule_dag(api, "cancelled")
    assert api.post(f"/api/cancel-run/{run_id}", {}, format="json").status_code == 200
    tr = task_run(run_id, "late")
    assert claim.task_run_claim(task_run_id=tr.id, attempt=0, agent_id="a@x") is None
    tr.refresh_from_db()
    assert tr.status == "cancelled" and tr.attempts == 0 and events(run_id, "task.running") == 0


def test_claim_racing_cancel_either_runs_then_stops_or_never_starts(api):
    """Whichever commits first, the task run ends cancelled and the run stays cancelled."""
    for i in range(4):
        put_task(api, f"c{i}", "true")
        put_dag(api, f"claim-cancel-{i}", [f"c{i}"])
        run_id = schedule_dag(api, f"claim-cancel-{i}")
        tr = task_run(run_id, f"c{i}")
        claimed, cancelled = race(
            [
                lambda tr=tr: claim.task_run_claim(task_run_id=tr.id, attempt=0, agent_id="a@x"),
                lambda run_id=run_id: api.post(f"/api/cancel-run/{run_id}", {}, format="json").status_code,
            ]
        )
        assert cancelled == 200
        still_running, _ = claim.task_run_still_mine(task_run_id=tr.id, attempt=1)
        assert not still_running  # an agent that did claim it stops the command at its next poll
        if claimed is not None:
            claim.task_run_close_cancelled(task_run_id=tr.id, attempt=claimed.attempt)
        tr.refresh_from_db()
        assert tr.status == "cancelled", (claimed, tr.status)
        assert run_detail(api, run_id)["status"] == "cancelled"


def test_upstreams_completing_together_queue_their_dependent_once(api):
    uppers = [f"up{i}" for i in range(4)]
    for task in uppers:
        put_task(api, task, "true")
    put_task(api, "join", "true", dependencies=uppers)
    put_dag(api, "fan-in", [*uppers, "join"])
    run_id = schedule_dag(api, "fan-in")
    executions = [
        claim.task_run_claim(task_run_id=task_run(run_id, t).id, attempt=0, agent_id="a@x") for t in uppers
    ]
    assert all(executions)
    results = race(
        [
            lambda e=e: finish.task_run_finish(
                task_run_id=e.task_run_id, attempt=e.attempt, ok=True, exit_code=0, run_id=run_id, execution=e
            )
            for e in executions
        ]
    )
    assert results == ["completed"] * 4
    join = task_run(run_id, "join")
    assert join.status == "queued"
    assert events(run_id, "task.queued", "join") == 1
    assert wakeups_sent(join.id) == 1
    assert run_detail(api, run_id)["status"] == "running"

    assert executor.execute(task_run_id=join.id, attempt=0, agent_id="a@x") == "completed"
    run = run_detail(api, run_id)
    assert run["status"] == "completed" and run["end_time"]
    assert events(run_id, "dag.completed") == 1


def test_last_completions_racing_complete_the_run_once(api):
    leaves = [f"leaf{i}" for i in range(4)]
    for task in leaves:
        put_task(api, task, "true")
    put_dag(api, "leaves", leaves)
    run_id = schedule_dag(api, "leaves")
    executions = [
        claim.task_run_claim(task_run_id=task_run(run_id, t).id, attempt=0, agent_id="a@x") for t in leaves
    ]
    assert all(e is not None and not e.has_dependents for e in executions)
    race(
        [
            lambda e=e: finish.task_run_finish(
                task_run_id=e.task_run_id, attempt=e.attempt, ok=True, exit_code=0, run_id=run_id, execution=e
            )
            for e in executions
        ]
    )
    assert run_detail(api, run_id)["status"] == "completed"
    assert events(run_id, "dag.completed") == 1
    assert events(run_id, "task.completed") == 4
    assert progress(run_id) == (0, 0)  # the run's counter, decremented by each of the racing four


def run_until_settled(run_id: str) -> None:
    """What an agent does with each wakeup: claim, run the command, finish; until nothing is queued."""
    while queued := list(TaskRun.objects.filter(run_id=run_id, status="queued").order_by("pk")):
        for tr in queued:
            executor.execute(task_run_id=tr.id, attempt=tr.attempts, agent_id="agent@sqlite")


def test_a_dag_runs_through_the_agent_code_path(api):
    put_task(api, "a", "echo a-out")
    put_task(api, "b", "echo b-out", dependencies=["a"])
    put_task(api, "c", "echo c-out", dependencies=["a"])
    put_task(api, "d", "echo d-out", dependencies=["b", "c"])
    put_dag(api, "diamond", ["a", "b", "c", "d"])
    run_id = schedule_dag(api, "diamond")
    run_until_settled(run_id)
    run = run_detail(api, run_id)
    assert run["status"] == "completed"
    by_id = tasks_by_id(run)
    assert {t: by_id[t]["status"] for t in "abcd"} == dict.fromkeys("abcd", "completed")
    assert by_id["d"]["start_time"] >= max(by_id["b"]["end_time"], by_id["c"]["end_time"])
    logs = api.get(f"/api/tasks/{by_id['d']['task_run_id']}/logs").json()
    assert "d-out" in str(logs)
    assert progress(run_id) == (0, 0)


def test_a_failure_fails_the_run_and_cancels_what_waits_on_it(api):
    put_task(api, "f1", "echo start")
    put_task(api, "f2", "echo boom >&2; exit 3", dependencies=["f1"])
    put_task(api, "f3", "echo never", dependencies=["f2"])
    put_dag(api, "failing", ["f1", "f2", "f3"])
    run_id = schedule_dag(api, "failing")
    run_until_settled(run_id)
    run = run_detail(api, run_id)
    assert run["status"] == "failed"
    by_id = tasks_by_id(run)
    assert [by_id[t]["status"] for t in ("f1", "f2", "f3")] == ["completed", "failed", "cancelled"]
    assert by_id["f2"]["exit_code"] == 3
    assert events(run_id, "dag.failed") == 1
    assert progress(run_id) == (2, 2)


def test_a_failed_attempt_is_retried_and_can_complete_the_run(api, tmp_path):
    state = tmp_path / "count"
    put_task(api, "second-time", f"echo x >> {state}; test $(wc -l < {state}) -ge 2")
    response = api.post("/api/schedule-task", {"task_id": "second-time", "retries": 2}, format="json")
    assert response.status_code == 201, response.content
    run_id = response.json()["run_id"]
    tr = task_run(run_id, "second-time")
    assert executor.execute(task_run_id=tr.id, attempt=0, agent_id="a@x") == "queued"
    assert wakeups_sent(tr.id) == 2  # the first attempt's and the retry's
    assert executor.execute(task_run_id=tr.id, attempt=0, agent_id="a@x") is None  # the old message
    assert executor.execute(task_run_id=tr.id, attempt=1, agent_id="a@x") == "completed"
    run = run_detail(api, run_id)
    assert run["status"] == "completed" and tasks_by_id(run)["second-time"]["attempts"] == 2
    assert events(run_id, "task.running") == 2
    assert progress(run_id) == (0, 0)


def test_status_and_metrics_read_sqlite(api):
    put_task(api, "timed", "true")
    put_dag(api, "timed", ["timed"])
    run_id = schedule_dag(api, "timed")
    run_until_settled(run_id)
    start = now_ms()
    # Known durations: SQLite averages DurationField values as microseconds, not intervals.
    TaskRun.objects.filter(run_id=run_id).update(start_time=start, end_time=start + timedelta(seconds=3))
    Run.objects.filter(pk=run_id).update(start_time=start, end_time=start + timedelta(seconds=5))
    metrics = api.get("/api/metrics").json()
    assert metrics["performance"]["average_task_duration_seconds"] == 3.0
    assert metrics["performance"]["average_dag_duration_seconds"] == 5.0
    assert metrics["tasks"]["completed"] == 1 and metrics["runs"]["completed"] == 1
    assert api.get("/api/status").json()["backend"] == {
        "type": "sqlite",
        "status": "healthy",
        "latency_ms": pytest.approx(0, abs=1000),
    }


def test_priorities_and_pools_order_the_claims_on_sqlite(api):
    """Messages are tokens here too: the first message to be executed runs the best task run, and
    a pool with one slot takes one task run at a time."""
    put_task(api, "prio-sq", "echo p")
    low, high = (
        api.post("/api/schedule-task", {"task_id": "prio-sq", "priority": p}, format="json").json()
        for p in (0, 7)
    )
    first = executor.execute(task_run_id=low["task_run_id"], attempt=0, agent_id="a@x")
    assert first == "completed" and task_run(high["run_id"], "prio-sq").status == "completed"
    assert task_run(low["run_id"], "prio-sq").status == "queued"
    assert executor.execute(task_run_id=high["task_run_id"], attempt=0, agent_id="a@x") == "completed"
    assert task_run(low["run_id"], "prio-sq").status == "completed"

    assert api.put("/api/pools/sq-pool", {"slots": 1}, format="json").status_code == 201
    put_task(api, "pooled-sq", "echo pooled", pool="sq-pool")
    a, b = (api.post("/api/schedule-task", {"task_id": "pooled-sq"}, format="json").json() for _ in range(2))
    held = claim.task_run_claim_row(
        task_run_id=a["task_run_id"], attempt=0, agent_id="h@x", agent_session="", guarded=False
    )
    assert held is not None  # the slot is taken by a claim that has not finished
    assert executor.execute(task_run_id=b["task_run_id"], attempt=0, agent_id="a@x") is None  # pool full
    assert task_run(b["run_id"], "pooled-sq").status == "queued"
    finish.task_run_finish(task_run_id=a["task_run_id"], attempt=1, ok=True, exit_code=0)
    assert executor.execute(task_run_id=b["task_run_id"], attempt=0, agent_id="a@x") == "completed"


def test_graph_and_a_rerun_with_carried_results_on_sqlite(api):
    """The graph read as rows, and a rerun's task runs through the ORM (no COPY): the completed
    upstream carried over, the failed task queued at once."""
    put_task(api, "up")
    put_task(api, "down", dependencies=["up"])
    put_dag(api, "carry", ["up", "down"])
    run_id = schedule_dag(api, "carry")
    graph = api.get(f"/api/runs/{run_id}/graph").json()
    ids = {node["task_id"]: node["id"] for node in graph["nodes"]}
    assert graph["edges"] == [{"from": ids["up"], "to": ids["down"]}]
    now = now_ms()
    TaskRun.objects.filter(pk=ids["up"]).update(status="completed", start_time=now, end_time=now, exit_code=0)
    TaskRun.objects.filter(pk=ids["down"]).update(status="failed", exit_code=1)
    Run.objects.filter(pk=run_id).update(status="failed", end_time=now)
    response = api.post(f"/api/rerun/{run_id}", {"failed_only": True}, format="json")
    assert response.status_code == 201, response.content
    new = response.json()["new_run_id"]
    up, down = task_run(new, "up"), task_run(new, "down")
    assert (up.status, up.carried_from, up.exit_code) == ("completed", ids["up"], 0)
    assert (down.status, down.upstream, up.has_dependents, down.has_dependents) == (
        "queued", [up.id], True, False,
    )  # fmt: skip
    assert up.log_lines.get().line == f"[orchestrator] result carried over from {ids['up']}"
    assert (events(new, "task.pending"), events(new, "task.queued", "down")) == (1, 1)
