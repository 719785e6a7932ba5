"""The run's counter of unfinished task runs (runs.models.RunProgress): every completion path counts
once, nothing else changes it, the completion that takes it to zero completes the run, and
completions of one run racing each other on real PostgreSQL connections count exactly."""

from __future__ import annotations

import importlib
import threading

import psycopg
import pytest
from django.db import connection, connections

from orchestrator.events.models import Event
from orchestrator.runs import claim, completion, executor, finish, services
from orchestrator.runs.models import Run, RunProgress, TaskRun
from tests.orchestrator.helpers import progress, put_dag, put_task
from tests.support.processes import wait_for

pytestmark = pytest.mark.django_db(transaction=True)
backfill = importlib.import_module("orchestrator.runs.migrations.0009_run_progress")


def schedule(api, dag_id: str, tasks: dict[str, list[str]]) -> tuple[str, dict[str, str]]:
    """A DAG of `tasks` ({task: its upstream}) on a queue no agent serves, scheduled: (run, ids)."""
    for task_id, deps in tasks.items():
        put_task(api, task_id, "true", dependencies=deps, queue="in-process")
    put_dag(api, dag_id, list(tasks))
    run_id = api.post("/api/schedule-dag", {"dag_id": dag_id}, format="json").json()["run_id"]
    return run_id, dict(TaskRun.objects.filter(run_id=run_id).values_list("task_id", "id"))


class Statements(list):
    """Every statement run on this thread's connection meanwhile, prepared ones included (an
    execute wrapper; CaptureQueriesContext sees only Django's debug cursor)."""

    def __enter__(self):
        self.wrapping = connection.execute_wrapper(self.record)
        self.wrapping.__enter__()
        return self

    def __exit__(self, *exc):
        return self.wrapping.__exit__(*exc)

    def record(self, execute, sql, params, many, context):
        self.append(" ".join(sql.split()))
        return execute(sql, params, many, context)


def run_checks(statements: list[str]) -> int:
    """The look-ups of a run's unfinished task runs (the run-completion check) among statements."""
    return sum("FROM orch_runs_taskrun WHERE run_id = %s AND status IN" in sql for sql in statements)


def test_each_completion_path_counts_once_and_only_the_last_checks_the_run(api):
    """a -> (b, c) -> d, e alone: a fan-out root and a chain link (one statement), a fan-in (the
    transaction), leaves; the counter follows the task runs at every step, and no completion but
    the last looks at the run's task runs."""
    run_id, ids = schedule(api, "cnt", {"ca": [], "cb": ["ca"], "cc": ["ca"], "cd": ["cb", "cc"], "ce": []})
    assert progress(run_id) == (5, 5)
    for left, task_id in enumerate(("ca", "ce", "cb", "cc"), start=1):
        with Statements() as queries:
            assert executor.execute(task_run_id=ids[task_id], attempt=0, agent_id="t@local") == "completed"
        assert progress(run_id) == (5 - left, 5 - left)
        assert run_checks(queries) == 0, task_id
    with Statements() as queries:
        assert executor.execute(task_run_id=ids["cd"], attempt=0, agent_id="t@local") == "completed"
    assert progress(run_id) == (0, 0) and Run.objects.get(pk=run_id).status == "completed"
    assert run_checks(queries) == 1  # under the run's lock, once the counter said zero
    assert Event.objects.filter(run_id=run_id, type="dag.completed").count() == 1


def test_a_completion_without_the_agents_execution_counts_too(api):
    """The portable path (`_complete_any`: SQLite, or an outcome recorded without the claim's
    Execution) and a duplicate outcome of the same attempt, which counts nothing."""
    run_id, ids = schedule(api, "cntany", {"xa": [], "xb": ["xa"]})
    ex = claim.task_run_claim(task_run_id=ids["xa"], attempt=0, agent_id="t@local")
    assert ex is not None
    for expected in ("completed", None):
        status = finish.task_run_finish(task_run_id=ids["xa"], attempt=1, ok=True, exit_code=0, run_id=run_id)
        assert status == expected
        assert progress(run_id) == (1, 1)
    assert completion.task_run_complete(task_run_id=ids["xa"], attempt=1, run_id=run_id, execution=ex) is None
    assert progress(run_id) == (1, 1)
    ex = claim.task_run_claim(task_run_id=ids["xb"], attempt=0, agent_id="t@local")
    assert ex is not None
    assert finish.task_run_finish(task_run_id=ids["xb"], attempt=1, ok=True, exit_code=0, run_id=run_id)
    assert progress(run_id) == (0, 0) and Run.objects.get(pk=run_id).status == "completed"


def test_a_run_that_ended_paused_completes_on_resume(api):
    run_id, ids = schedule(api, "cntpause", {"pa": [], "pb": []})
    ex = claim.task_run_claim(task_run_id=ids["pa"], attempt=0, agent_id="t@local")
    assert executor.execute(task_run_id=ids["pb"], attempt=0, agent_id="t@local") == "completed"
    services.run_pause(run_id=run_id)
    assert ex is not None and completion.task_run_complete(
        task_run_id=ids["pa"], attempt=1, run_id=run_id, execution=ex
    )
    assert progress(run_id) == (0, 0) and Run.objects.get(pk=run_id).status == "paused"
    assert services.run_resume(run_id=run_id).status == "completed"


def test_a_run_without_a_counter_is_checked_after_each_completion(api):
    """Runs made before the counter existed and not backfilled, or by other means (bulk loads)."""
    run_id, ids = schedule(api, "cntnone", {"na": [], "nb": []})
    RunProgress.objects.filter(run_id=run_id).delete()
    with Statements() as queries:
        assert executor.execute(task_run_id=ids["na"], attempt=0, agent_id="t@local") == "completed"
    assert run_checks(queries) == 1 and Run.objects.get(pk=run_id).status == "running"
    assert executor.execute(task_run_id=ids["nb"], attempt=0, agent_id="t@local") == "completed"
    assert Run.objects.get(pk=run_id).status == "completed"


def test_the_migration_counts_every_existing_run(api):
    run_id, ids = schedule(api, "cntmig", {"ma": [], "mb": ["ma"], "mc": []})
    assert executor.execute(task_run_id=ids["ma"], attempt=0, agent_id="t@local") == "completed"
    services.run_cancel(run_id=run_id, force=False)
    other, _ = schedule(api, "cntmig2", {"md": []})
    RunProgress.objects.all().delete()
    with connection.cursor() as cursor:
        cursor.execute(backfill.BACKFILL)
    assert progress(run_id) == (2, 2) and progress(other) == (1, 1)


def _lock_conn() -> psycopg.Connection:
    """A connection of its own to the test database, to hold a lock while others wait for it."""
    return psycopg.connect(**connection.get_connection_params())


def _complete_in_threads(executions: list[claim.Execution]) -> tuple[list[threading.Thread], list]:
    results: list = []

    def complete(ex: claim.Execution) -> None:
        try:
            results.append(
                completion.task_run_complete(
                    task_run_id=ex.task_run_id, attempt=ex.attempt, run_id=ex.run_id, execution=ex
                )
            )
        finally:
            connections.close_all()

    threads = [threading.Thread(target=complete, args=(ex,)) for ex in executions]
    for thread in threads:
        thread.start()
    return threads, results


def _waiting_on_locks() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


def _claimed(api, dag_id: str, n: int) -> tuple[str, list[claim.Execution]]:
    run_id, ids = schedule(api, dag_id, {f"{dag_id}{i}": [] for i in range(n)})
    executions = [claim.task_run_claim(task_run_id=pk, attempt=0, agent_id="t@local") for pk in ids.values()]
    assert all(executions)
    return run_id, executions  # type: ignore[return-value]


def test_concurrent_completions_of_one_run_count_exactly(api):
    """Eight completions of one run, each in its own connection, all queued on the counter's row
    lock at once (it is held meanwhile): each decrements what the previous one committed, so the
    counter reaches zero, with the run completed once. A decrement computed from the statement's
    snapshot would leave it at seven and the run running."""
    run_id, executions = _claimed(api, "race", 8)
    holder = _lock_conn()
    holder.execute("SELECT 1 FROM orch_runs_runprogress WHERE run_id = %s FOR UPDATE", [run_id])
    try:
        threads, results = _complete_in_threads(executions)
        wait_for(
            lambda: _waiting_on_locks() == 8, timeout=20, what="eight completions waiting on the counter"
        )
        # each has completed its task run in its statement, not yet committed
        assert TaskRun.objects.filter(run_id=run_id, status="completed").count() == 0
    finally:
        holder.rollback()
        holder.close()
    for thread in threads:
        thread.join(timeout=30)
    assert results == ["completed"] * 8
    assert progress(run_id) == (0, 0) and Run.objects.get(pk=run_id).status == "completed"
    assert Event.objects.filter(run_id=run_id, type="dag.completed").count() == 1


def test_completions_go_on_while_a_run_level_change_holds_the_run(api):
    """Completions lock their task run, then the counter, never the run's row: while a run-level
    change (a cancel, a failure) holds the run's row, they all commit, except the last one's run
    completion, which waits for that lock. (Taking the run's row after the task run's would
    deadlock with a cancel, which locks the run's row and then the task runs'.)"""
    run_id, executions = _claimed(api, "held", 4)
    holder = _lock_conn()
    holder.execute("SELECT 1 FROM orch_runs_run WHERE run_id = %s FOR UPDATE", [run_id])
    try:
        threads, results = _complete_in_threads(executions)
        wait_for(lambda: len(results) == 3, timeout=20, what="three completions while the run is held")
        wait_for(lambda: _waiting_on_locks() == 1, timeout=20, what="the last one's run completion waiting")
        assert progress(run_id) == (0, 0) and Run.objects.get(pk=run_id).status == "running"
    finally:
        holder.rollback()
        holder.close()
    for thread in threads:
        thread.join(timeout=30)
    assert results == ["completed"] * 4 and Run.objects.get(pk=run_id).status == "completed"


def test_dependents_are_found_by_their_list_or_among_the_run_for_older_rows(api):
    """a -> (b, c) -> d: a's completion queues b and c (one statement), b's and c's reach the fan-in
    d (the transaction). Task runs carry their dependents' ids, so no completion looks through the
    run's pending task runs; rows from before that list (NULL) are served by that look-up."""

    def scans(statements: list[str]) -> int:
        return sum("upstream @>" in sql or '"upstream" @>' in sql for sql in statements)

    for listed in (True, False):
        n = "l" if listed else "u"
        run_id, ids = schedule(api, f"dep{n}", {f"{n}a": [], f"{n}b": [f"{n}a"], f"{n}c": [f"{n}a"],
                                                f"{n}d": [f"{n}b", f"{n}c"]})  # fmt: skip
        assert TaskRun.objects.get(pk=ids[f"{n}a"]).dependents == [ids[f"{n}b"], ids[f"{n}c"]]
        if not listed:
            TaskRun.objects.filter(run_id=run_id).update(dependents=None)
        with Statements() as statements:
            for task in "abcd":
                if task == "d":
                    assert TaskRun.objects.get(pk=ids[f"{n}d"]).status == "queued"
                status = executor.execute(task_run_id=ids[f"{n}{task}"], attempt=0, agent_id="t@local")
                assert status == "completed"
        assert Run.objects.get(pk=run_id).status == "completed" and progress(run_id) == (0, 0)
        assert Event.objects.filter(run_id=run_id, type="task.queued").count() == 4
        assert (scans(statements) == 0) is listed
