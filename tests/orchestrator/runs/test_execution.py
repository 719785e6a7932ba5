"""End to end with real agents (Celery workers started by `run_agent`), PostgreSQL and Redis."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pytest
from django.utils.dateparse import parse_datetime

from orchestrator.events.models import Event
from orchestrator.runs.models import TaskLogLine, TaskRun
from orchestrator.runs.tasks import execute_task_run
from tests.orchestrator.helpers import progress, put_dag, put_task, run_detail, tasks_by_id, wait_run
from tests.support.processes import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by the agent) counts as stopped
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


def ts(value: str):
    return parse_datetime(value)


def schedule_dag(api, dag_id: str, **body) -> dict:
    response = api.post("/api/schedule-dag", {"dag_id": dag_id, **body}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def schedule_task(api, task_id: str, **body) -> dict:
    response = api.post("/api/schedule-task", {"task_id": task_id, **body}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def logs(api, task_run_id: str, **query) -> dict:
    response = api.get(f"/api/tasks/{task_run_id}/logs", query)
    assert response.status_code == 200, response.content
    return response.json()


def test_diamond_dag_runs_in_dependency_order(agents, api):
    put_task(api, "a", "echo a-out")
    put_task(api, "b", "sleep 0.2; echo b-out", dependencies=["a"])
    put_task(api, "c", "echo c-out", dependencies=["a"])
    put_task(api, "d", "echo d-out", dependencies=["b", "c"])
    put_dag(api, "diamond", [{"id": t, "parameters": {}} for t in "abcd"])
    scheduled = schedule_dag(api, "diamond")
    assert scheduled["status"] == "pending"
    assert {t["status"] for t in scheduled["tasks"]} == {"pending"}

    run = wait_run(api, scheduled["run_id"])
    assert run["status"] == "completed", run
    assert (run["task_count"], run["completed_tasks"], run["failed_tasks"]) == (4, 4, 0)
    t = tasks_by_id(run)
    assert ts(t["b"]["start_time"]) >= ts(t["a"]["end_time"])
    assert ts(t["c"]["start_time"]) >= ts(t["a"]["end_time"])
    assert ts(t["d"]["start_time"]) >= max(ts(t["b"]["end_time"]), ts(t["c"]["end_time"]))
    assert progress(run["run_id"]) == (0, 0)  # a fan-out, a fan-in and a leaf each counted once
    assert logs(api, t["d"]["task_run_id"])["logs"] == "d-out"
    # one task.running per task run: nothing ran twice
    assert Event.objects.filter(run_id=run["run_id"], type="task.running").count() == 4
    for kind in ("task.running", "task.completed"):
        datas = [e.data for e in Event.objects.filter(run_id=run["run_id"], type=kind)]
        assert len(datas) == 4 and {d["task_id"] for d in datas} == set("abcd")
        by_task = {d["task_id"]: d for d in datas}
        assert by_task["d"] == {
            "run_id": run["run_id"], "dag_id": "diamond", "task_id": "d", "task_run_id": t["d"]["task_run_id"],
            "status": kind.split(".")[1], "start_time": t["d"]["start_time"],
            "end_time": t["d"]["end_time"] if kind == "task.completed" else None,
            "duration_seconds": t["d"]["duration_seconds"] if kind == "task.completed" else None,
        }  # fmt: skip
    types = list(Event.objects.filter(run_id=run["run_id"], task_id="").values_list("type", flat=True))
    assert types == ["dag.pending", "dag.running", "dag.completed"]


def test_failing_middle_task_fails_the_run_and_dependents_never_start(agents, api):
    put_task(api, "f1", "echo start")
    put_task(api, "f2", "echo boom >&2; exit 3", dependencies=["f1"])
    put_task(api, "f3", "echo never", dependencies=["f2"])
    put_dag(api, "failing", ["f1", "f2", "f3"])
    run = wait_run(api, schedule_dag(api, "failing")["run_id"])
    assert run["status"] == "failed"
    t = tasks_by_id(run)
    assert [t[x]["status"] for x in ("f1", "f2", "f3")] == ["completed", "failed", "cancelled"]
    assert t["f3"]["start_time"] is None
    assert logs(api, t["f2"]["task_run_id"])["logs"] == "boom\n[orchestrator] command exited with code 3"
    assert not TaskLogLine.objects.filter(task_run_id=t["f3"]["task_run_id"]).exists()
    assert run["failed_tasks"] == 1
    assert progress(run["run_id"]) == (2, 2)  # failed and cancelled are not completed


def test_parameters_env_vars_and_context_reach_the_command(agents, api):
    api.put("/api/contexts/base", {"variables": {"REGION": "eu", "LEVEL": "base"}}, format="json")
    api.put("/api/contexts/prod", {"variables": {"LEVEL": "prod"}, "extends": "base"}, format="json")
    put_task(
        api,
        "p1",
        'echo "p1 ${GREETING} $GREETING $REGION $LEVEL $TOKEN $ONLY"',
        parameters={"GREETING": "hi", "ONLY": "d"},
    )
    put_task(api, "p2", 'echo "p2 [$GREETING] [$ONLY] $REGION"')
    put_dag(api, "params", [{"id": "p1", "parameters": {"GREETING": "dag"}}, {"id": "p2"}], context="prod")
    scheduled = schedule_dag(
        api, "params", env_vars={"TOKEN": "tok", "GREETING": "env"}, parameters={"p1.ONLY": "mine"}
    )
    run = wait_run(api, scheduled["run_id"])
    assert run["status"] == "completed", run
    assert run["context"] == {"REGION": "eu", "LEVEL": "prod"}
    t = tasks_by_id(run)
    assert logs(api, t["p1"]["task_run_id"])["logs"] == "p1 dag dag eu prod tok mine"
    # parameters reach only their task; env_vars reach every task
    assert logs(api, t["p2"]["task_run_id"])["logs"] == "p2 [env] [] eu"


def test_unknown_reference_fails_with_a_clear_log_line(agents, api):
    put_task(api, "unknown-ref", "echo ${NOPE}")
    run = wait_run(api, schedule_task(api, "unknown-ref", retries=2)["run_id"])
    assert run["status"] == "failed"
    t = tasks_by_id(run)["unknown-ref"]
    assert t["attempts"] == 1  # not retried: it cannot succeed
    assert "unknown parameter(s) ${NOPE}" in logs(api, t["task_run_id"])["logs"]


def test_timeout_kills_the_process_group(agents, api):
    marker = Path(tempfile.mkdtemp()) / "survivor"
    put_task(api, "slow", f"(sleep 3; touch {marker}) & sleep 30")
    started = time.monotonic()
    run = wait_run(api, schedule_task(api, "slow", timeout_seconds=1)["run_id"], timeout=20)
    assert time.monotonic() - started < 10
    assert run["status"] == "failed"
    t = tasks_by_id(run)["slow"]
    assert "timed out after 1 s" in logs(api, t["task_run_id"])["logs"]
    # the background child of the group was killed too: wait past its 3 s and check
    deadline = time.monotonic() + 4
    wait_for(lambda: time.monotonic() > deadline, timeout=6, what="grace")
    assert not marker.exists()


def test_retries_happen_with_the_delay(agents, api):
    put_task(api, "flaky", "echo try; exit 1")
    run = wait_run(api, schedule_task(api, "flaky", retries=2, retry_delay_seconds=1)["run_id"], timeout=30)
    assert run["status"] == "failed"
    t = tasks_by_id(run)["flaky"]
    assert t["attempts"] == 3
    starts = list(
        Event.objects.filter(run_id=run["run_id"], type="task.running").values_list("occurred_at", flat=True)
    )
    assert len(starts) == 3
    assert all(
        (later - earlier).total_seconds() >= 1.0 for earlier, later in zip(starts, starts[1:], strict=False)
    )
    text = logs(api, t["task_run_id"])["logs"]
    assert text.count("try") == 3 and "[orchestrator] attempt 3 of 3" in text
    assert progress(run["run_id"]) == (1, 1)  # three attempts, none of them counted


def test_retry_that_succeeds_completes_the_run(agents, api):
    state = Path(tempfile.mkdtemp()) / "count"
    put_task(api, "second-time", f"echo x >> {state}; test $(wc -l < {state}) -ge 2")
    run = wait_run(api, schedule_task(api, "second-time", retries=3)["run_id"])
    assert run["status"] == "completed"
    assert tasks_by_id(run)["second-time"]["attempts"] == 2
    assert progress(run["run_id"]) == (0, 0)  # the retry's completion counted once


def test_the_same_message_delivered_twice_runs_the_command_once(agents, api):
    out = Path(tempfile.mkdtemp()) / "ran"
    put_task(api, "once", f"sleep 1; echo ran >> {out}", queue="nobody-listens")
    scheduled = schedule_task(api, "once")
    tr = TaskRun.objects.get(pk=scheduled["task_run_id"])
    assert tr.status == "queued"
    for _ in range(2):  # the same wake-up, twice, to queues real agents consume
        execute_task_run.apply_async(args=[tr.id, 0], queue="default")
    run = wait_run(api, scheduled["run_id"])
    assert run["status"] == "completed"
    assert out.read_text() == "ran\n"
    assert Event.objects.filter(run_id=run["run_id"], type="task.running").count() == 1
    # a late copy after completion does nothing either
    execute_task_run.apply(args=[tr.id, 0])
    assert out.read_text() == "ran\n"
    assert progress(run["run_id"]) == (0, 0)  # the duplicate and the late copy counted nothing


def test_a_fan_out_completes_once_its_last_task_run_is_counted(agents, api):
    """Task runs of one run completing at once on four agent processes (two agents, two each): the
    counter takes every completion, and the run completes exactly once."""
    names = [f"wide{i}" for i in range(24)]
    for name in names:
        put_task(api, name, "true")
    put_dag(api, "wide", names)
    run = wait_run(api, schedule_dag(api, "wide")["run_id"])
    assert run["status"] == "completed" and run["completed_tasks"] == 24
    assert progress(run["run_id"]) == (0, 0)
    assert Event.objects.filter(run_id=run["run_id"], type="dag.completed").count() == 1


def test_logs_are_visible_while_running_and_support_tail_and_since(agents, api):
    put_task(api, "chatty", "for i in 1 2 3; do echo line$i; done; sleep 30")
    scheduled = schedule_task(api, "chatty")
    tr_id = scheduled["task_run_id"]
    body = wait_for(
        lambda: (b := logs(api, tr_id))["logs"] == "line1\nline2\nline3" and b, timeout=20, what="live logs"
    )
    assert body["has_more"] is True and body["end_time"] is None
    assert logs(api, tr_id, tail=2)["logs"] == "line2\nline3"
    assert logs(api, tr_id, since="2100-01-01T00:00:00Z")["logs"] == ""
    assert api.post(f"/api/cancel-run/{scheduled['run_id']}?force=true").status_code == 200
    wait_run(api, scheduled["run_id"])


def test_cancel_stops_a_running_sleep_and_pending_tasks_never_start(agents, api):
    pidfile = Path(tempfile.mkdtemp()) / "pid"
    put_task(api, "long", f"echo $$ > {pidfile}; exec sleep 30")
    put_task(api, "after-long", "echo never", dependencies=["long"])
    put_dag(api, "cancellable", ["long", "after-long"])
    scheduled = schedule_dag(api, "cancellable")
    run_id = scheduled["run_id"]
    wait_for(lambda: run_detail(api, run_id)["status"] == "running", timeout=20, what="running")
    long_tr = TaskRun.objects.get(run_id=run_id, task_id="long")
    wait_for(lambda: TaskRun.objects.get(pk=long_tr.pk).status == "running", what="long running")
    started = time.monotonic()
    response = api.post(f"/api/cancel-run/{run_id}")
    assert response.status_code == 200
    assert response.json() | {"message": ""} == {"success": True, "message": "", "run_id": run_id}
    run = run_detail(api, run_id)
    assert run["status"] == "cancelled"
    assert {t["task_id"]: t["status"] for t in run["tasks"]} == {
        "long": "cancelled",
        "after-long": "cancelled",
    }
    # the agent stops the command (SIGTERM) within seconds
    wait_for(
        lambda: "sending SIGTERM" in logs(api, long_tr.id)["logs"],
        timeout=10,
        what="agent to stop the command",
    )
    assert time.monotonic() - started < 10
    pid = int(pidfile.read_text())
    wait_for(lambda: not pid_alive(pid), timeout=10, what="sleep 30 to die")
    assert tasks_by_id(run_detail(api, run_id))["after-long"]["start_time"] is None
    assert progress(run_id) == (2, 2)  # the stopped command's late outcome changed nothing
    assert api.post(f"/api/cancel-run/{run_id}").status_code == 409


def test_rerun_failed_only_and_from_task_execute_exactly_the_right_tasks(agents, api):
    flag = Path(tempfile.mkdtemp()) / "fixed"
    put_task(api, "x1", "echo x1")
    put_task(api, "x2", f"test -f {flag}", dependencies=["x1"])
    put_task(api, "x3", "echo x3", dependencies=["x2"])
    put_task(api, "x4", "echo x4")
    put_dag(api, "rerunnable", ["x1", "x2", "x3", "x4"])
    first = wait_run(api, schedule_dag(api, "rerunnable")["run_id"])
    assert first["status"] == "failed"
    assert tasks_by_id(first)["x4"]["status"] == "completed"

    flag.touch()
    response = api.post(f"/api/rerun/{first['run_id']}", {"failed_only": True}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (
        body["original_run_id"] == first["run_id"] and body["status"] == "pending" and body["success"] is True
    )
    second = wait_run(api, body["new_run_id"])
    assert second["status"] == "completed" and second["original_run_id"] == first["run_id"]
    executed = set(
        Event.objects.filter(run_id=second["run_id"], type="task.running").values_list("task_id", flat=True)
    )
    assert executed == {"x2", "x3"}
    t = tasks_by_id(second)
    assert set(t) == {"x1", "x2", "x3"}  # x4 completed and is not upstream of what failed
    assert t["x1"]["attempts"] == 0 and "carried over from" in logs(api, t["x1"]["task_run_id"])["logs"]
    assert progress(first["run_id"]) == (2, 2)  # x2 failed, x3 cancelled
    assert progress(second["run_id"]) == (0, 0)  # counted from 2: x1 was carried over completed

    response = api.post(f"/api/rerun/{second['run_id']}", {"from_task": "x2"}, format="json")
    third = wait_run(api, response.json()["new_run_id"])
    assert third["status"] == "completed"
    executed = set(
        Event.objects.filter(run_id=third["run_id"], type="task.running").values_list("task_id", flat=True)
    )
    assert executed == {"x2", "x3"}

    response = api.post(f"/api/rerun/{third['run_id']}", {"from_task": "x3"}, format="json")
    fourth = wait_run(api, response.json()["new_run_id"])
    executed = set(
        Event.objects.filter(run_id=fourth["run_id"], type="task.running").values_list("task_id", flat=True)
    )
    assert executed == {"x3"} and fourth["status"] == "completed"
    assert progress(third["run_id"]) == progress(fourth["run_id"]) == (0, 0)


def test_rerun_everything_by_default(agents, api):
    put_task(api, "solo1", "echo one")
    put_task(api, "solo2", "echo two", dependencies=["solo1"])
    first = wait_run(api, schedule_task(api, "solo2")["run_id"])
    response = api.post(f"/api/rerun/{first['run_id']}")
    second = wait_run(api, response.json()["new_run_id"])
    assert second["status"] == "completed"
    executed = set(
        Event.objects.filter(run_id=second["run_id"], type="task.running").values_list("task_id", flat=True)
    )
    assert executed == {"solo1", "solo2"}
    assert second["dag_id"] is None
