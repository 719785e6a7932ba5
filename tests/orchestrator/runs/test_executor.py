"""The agent's execution path run in this process (claim, command, log capture, finish): the same
code a worker runs, without a broker hop, for the details that are easier to pin down here."""

from __future__ import annotations

import pytest

from orchestrator.events.models import Event
from orchestrator.runs import executor, transient
from orchestrator.runs.models import Run, TaskLogLine, TaskRun
from tests.orchestrator.helpers import put_dag, put_task

pytestmark = pytest.mark.django_db


def run_in_process(api, task_id: str, command: str, **schedule) -> TaskRun:
    put_task(api, task_id, command, queue="in-process")
    body = api.post("/api/schedule-task", {"task_id": task_id, **schedule}, format="json").json()
    executor.execute(task_run_id=body["task_run_id"], attempt=0, agent_id="test@local")
    return TaskRun.objects.get(pk=body["task_run_id"])


def test_log_cap_truncates_and_marks(api, settings):
    settings.TASK_LOG_MAX_BYTES = 100
    tr = run_in_process(api, "loud", "for i in $(seq 1 50); do echo line-$i; done")
    assert tr.status == "completed" and tr.log_truncated
    lines = list(TaskLogLine.objects.filter(task_run=tr).values_list("line", flat=True))
    assert lines[0] == "line-1" and "log truncated" in lines[-1]
    assert sum(len(line) + 1 for line in lines[:-1]) <= 100
    body = api.get(f"/api/tasks/{tr.id}/logs").json()
    assert body["truncated"] is True and body["has_more"] is False


def test_output_without_final_newline_and_stderr_are_captured(api):
    tr = run_in_process(api, "partial", "echo out; echo err >&2; printf tail")
    assert api.get(f"/api/tasks/{tr.id}/logs").json()["logs"] == "out\nerr\ntail"


def test_substituted_values_are_quoted_not_executed(api, tmp_path):
    target = tmp_path / "pwned"
    tr = run_in_process(api, "quoted", "echo ${X}", parameters={"X": f"a b; touch {target}"})
    assert tr.status == "completed"
    assert api.get(f"/api/tasks/{tr.id}/logs").json()["logs"] == f"a b; touch {target}"
    assert not target.exists()


def test_command_sees_only_its_parameters_and_the_base_environment(api, monkeypatch):
    monkeypatch.setenv("ORCH_SECRET_KEY", "must-not-leak")  # the agent's own environment
    tr = run_in_process(api, "envcheck", 'echo "[${ORCH_SECRET_KEY:-}] $ORCH_TASK_RUN_ID"')
    assert api.get(f"/api/tasks/{tr.id}/logs").json()["logs"] == f"[] {tr.id}"


def test_a_stale_message_does_nothing(api):
    tr = run_in_process(api, "stale", "echo once")
    assert executor.execute(task_run_id=tr.id, attempt=0, agent_id="test@local") is None
    assert executor.execute(task_run_id="ghost_00000000", attempt=0, agent_id="test@local") is None
    assert TaskLogLine.objects.filter(task_run=tr).count() == 1


def test_agent_environment_does_not_resolve_references(api):
    """Only parameters and env_vars resolve ${NAME}; ${HOME} of the agent is unknown."""
    tr = run_in_process(api, "homeless", "echo ${HOME}")
    assert tr.status == "failed"
    assert "unknown parameter(s) ${HOME}" in api.get(f"/api/tasks/{tr.id}/logs").json()["logs"]


def test_a_task_run_queued_after_its_run_was_cancelled_never_starts(api, tmp_path):
    """The race where an upstream completion queues a dependent in the instant a cancel reads the
    run's task runs: the dependent is left queued in a cancelled run. Its message must not start it."""
    marker = tmp_path / "ran"
    put_task(api, "race-up", "true", queue="in-process")
    put_task(api, "race-down", f"touch {marker}", dependencies=["race-up"], queue="in-process")
    body = api.post("/api/schedule-task", {"task_id": "race-down"}, format="json").json()
    assert api.post(f"/api/cancel-run/{body['run_id']}").status_code == 200
    down = TaskRun.objects.get(run_id=body["run_id"], task_id="race-down")
    TaskRun.objects.filter(pk=down.pk).update(status="queued")  # what the racing completion leaves

    assert executor.execute(task_run_id=down.pk, attempt=0, agent_id="test@local") is None
    down.refresh_from_db()
    assert down.status == "cancelled" and not marker.exists()


def test_dependents_are_queued_once_every_upstream_completed_with_their_events(api):
    """a -> (b, c) -> d: a's completion queues b and c, which wait for it alone (with one
    `task.queued` event each, after a's `task.completed`); b's leaves d pending, as d also waits for
    c; c's queues d."""
    put_task(api, "sq-a", "true", queue="in-process")
    put_task(api, "sq-b", "true", dependencies=["sq-a"], queue="in-process")
    put_task(api, "sq-c", "true", dependencies=["sq-a"], queue="in-process")
    put_task(api, "sq-d", "true", dependencies=["sq-b", "sq-c"], queue="in-process")
    put_dag(api, "sq", [{"id": t, "parameters": {}} for t in ("sq-a", "sq-b", "sq-c", "sq-d")])
    run_id = api.post("/api/schedule-dag", {"dag_id": "sq"}, format="json").json()["run_id"]
    ids = dict(TaskRun.objects.filter(run_id=run_id).values_list("task_id", "id"))

    def execute(task_id: str) -> None:
        assert executor.execute(task_run_id=ids[task_id], attempt=0, agent_id="test@local") == "completed"

    def statuses() -> dict[str, str]:
        return dict(TaskRun.objects.filter(run_id=run_id).values_list("task_id", "status"))

    execute("sq-a")
    assert statuses() == {"sq-a": "completed", "sq-b": "queued", "sq-c": "queued", "sq-d": "pending"}
    completed = Event.objects.get(run_id=run_id, type="task.completed", task_id="sq-a")
    queued = Event.objects.filter(run_id=run_id, type="task.queued", id__gt=completed.id).order_by("task_id")
    assert [e.data for e in queued] == [
        {"run_id": run_id, "dag_id": "sq", "task_id": t, "task_run_id": ids[t], "status": "queued",
         "start_time": None, "end_time": None, "duration_seconds": None}
        for t in ("sq-b", "sq-c")
    ]  # fmt: skip
    execute("sq-b")
    assert statuses()["sq-d"] == "pending"
    execute("sq-c")
    assert statuses()["sq-d"] == "queued"
    execute("sq-d")
    assert Run.objects.get(pk=run_id).status == "completed"
    assert Event.objects.filter(run_id=run_id, type="task.queued", task_id="sq-d").count() == 1


def test_a_claim_whose_answer_was_lost_is_found_again_by_its_session(api):
    """The claim committed but the connection dropped before its answer: the agent process that
    made it reads its attempt back; no other process can."""
    from orchestrator.runs import claim

    put_task(api, "lost-answer", "true", queue="in-process")
    tr_id = api.post("/api/schedule-task", {"task_id": "lost-answer"}, format="json").json()["task_run_id"]
    assert claim.task_run_claim(task_run_id=tr_id, attempt=0, agent_id="a@h", agent_session="s1")
    assert claim.task_run_claim(task_run_id=tr_id, attempt=0, agent_id="a@h", agent_session="s1") is None
    found = claim.task_run_claimed_by(task_run_id=tr_id, attempt=1, agent_session="s1")
    assert found is not None and (found.task_run_id, found.attempt, found.command) == (tr_id, 1, "true")
    assert claim.task_run_claimed_by(task_run_id=tr_id, attempt=1, agent_session="s2") is None


def test_transient_database_errors_are_waited_out_and_others_are_not(settings):
    from django.db import IntegrityError, OperationalError

    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise OperationalError("server closed the connection unexpectedly")
        return "done"

    assert transient.retry_transient(flaky, what="flaky") == "done" and len(calls) == 3

    def always_down():
        raise OperationalError("connection refused")

    with pytest.raises(OperationalError):
        transient.retry_transient(always_down, what="down", give_up_after=0.6)

    def broken():
        calls.append(1)
        raise IntegrityError("a bug, not an outage")

    calls.clear()
    with pytest.raises(IntegrityError):
        transient.retry_transient(broken, what="broken")
    assert len(calls) == 1
