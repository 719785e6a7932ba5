"""Scheduling writes a run's task runs with COPY, their events with one statement built by
PostgreSQL, and queues the roots its creation knows without reading the run back. Each is compared
here with the path it replaced (model instances through `bulk_insert`, events built in Python and
inserted as rows, the roots found by reading every pending task run): the same rows, the same
events in the same order."""

from __future__ import annotations

import json
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.db import transaction
from rest_framework.renderers import JSONRenderer

from orchestrator.definitions.models import TaskDefinition
from orchestrator.definitions.selectors import dependency_closure, source_closure
from orchestrator.events import services as events
from orchestrator.events.models import Event
from orchestrator.events.services import event_emit_run
from orchestrator.runs import planning, services, state
from orchestrator.runs.models import COMPLETED, PENDING, QUEUED, Run, TaskRun
from orchestrator.runs.outputs import run_graph_out
from orchestrator.runs.planning import NewTaskRun, ScheduleOptions
from orchestrator.runs.selectors import graph_of
from orchestrator.webhooks.services import webhook_create
from shared.api.time import iso, now_ms
from shared.bulkinsert import bulk_insert, lines
from tests.orchestrator.helpers import put_dag, put_task

pytestmark = pytest.mark.django_db

SKIPPED = ("run", "queued_at", "dispatched_at")  # compared as set or not: their values are times


@pytest.fixture
def dag(api):
    """Two roots, a fan-in and a leaf; parameters at every level, a pool, a context."""
    assert api.put("/api/contexts/ctx", {"variables": {"REGION": "eu"}}, format="json").status_code == 201
    assert api.put("/api/pools/p1", {"slots": 2}, format="json").status_code == 201
    put_task(api, "a", parameters={"A": "1"}, queue="qa")
    put_task(api, "b", pool="p1")
    put_task(api, "c", command="echo $A", dependencies=["a", "b"])
    put_task(api, "d", dependencies=["c"], parameters={"D": "x"})
    put_dag(api, "shape", [{"id": "b", "parameters": {"B": "2"}}, "a", "c", "d"], context="ctx")
    return "shape"


def _task_runs(run_id: str) -> list[dict]:
    fields = [f.attname for f in TaskRun._meta.concrete_fields if f.name not in SKIPPED]
    rows = TaskRun.objects.filter(run_id=run_id).order_by("id")
    return [
        {**{name: getattr(tr, name) for name in fields}, "queued": tr.queued_at is not None,
         "dispatched": tr.dispatched_at is not None}
        for tr in rows
    ]  # fmt: skip


def _events(run_id: str) -> list[tuple]:
    return [
        (e.type, e.dag_id, e.task_id, {**e.data, "run_id": None}, e.dispatched_at is None)
        for e in Event.objects.filter(run_id=run_id).order_by("id")
    ]


def _reference(run: Run, task_runs: list[NewTaskRun], run_id: str) -> None:
    """What scheduling wrote before, for the same task runs under another run id: model instances
    inserted by `bulk_insert`, events built in Python, the roots found by reading the run back and
    queued with their events."""
    copy = Run.objects.get(pk=run.run_id)
    copy.run_id, copy.status = run_id, PENDING
    dependents: dict[str, list[str]] = {}  # each task run's, from the others' upstream lists
    for tr in task_runs:
        for upstream_id in tr.upstream:
            dependents.setdefault(upstream_id, []).append(tr.id)
    with transaction.atomic():
        copy.save(force_insert=True)
        bulk_insert(
            TaskRun,
            [TaskRun(run=copy, dependents=dependents.get(tr.id, []), **tr._asdict()) for tr in task_runs],
        )
        event_emit_run(copy)
        events._emit_rows([tr for tr in task_runs if not tr.carried_from], copy, now_ms())
    with transaction.atomic():
        # the decision read back from the rows, not given
        state.send_on_commit(state.run_queue_ready(state.run_lock(run_id)))


def test_a_scheduled_dag_is_written_as_the_model_path_wrote_it(dag):
    options = ScheduleOptions(
        env_vars={"E": "e"}, parameters={"c.P": "p"}, retries=2, retry_delay_seconds=5,
        timeout_seconds=60, priority=3,
    )  # fmt: skip
    run, task_runs = services.run_schedule_dag(dag_id=dag, options=options)
    fast = (_task_runs(run.run_id), _events(run.run_id))
    TaskRun.objects.filter(run=run).delete()  # the same task run ids, once more the old way
    _reference(run, task_runs, "reference")
    assert fast == (_task_runs("reference"), _events("reference"))
    # and what those rows are: the roots queued, the rest pending; env by precedence
    rows = {tr["task_id"]: tr for tr in fast[0]}
    assert {t: (r["status"], r["queued"]) for t, r in rows.items()} == {
        "a": (QUEUED, True), "b": (QUEUED, True), "c": (PENDING, False), "d": (PENDING, False),
    }  # fmt: skip
    assert rows["a"]["env"] == {"E": "e", "A": "1", "REGION": "eu"}
    assert rows["a"]["dependents"] == rows["b"]["dependents"] == [rows["c"]["id"]]
    assert (rows["c"]["dependents"], rows["d"]["dependents"]) == ([rows["d"]["id"]], [])
    assert rows["b"]["env"] == {"E": "e", "B": "2", "REGION": "eu"}
    assert rows["c"]["env"] == {"E": "e", "REGION": "eu", "P": "p"}
    assert rows["c"]["upstream"] == [rows["a"]["id"], rows["b"]["id"]]
    assert [r["has_dependents"] for r in rows.values()] == [True, True, True, False]
    assert {(r["max_attempts"], r["retry_delay_seconds"], r["timeout_seconds"], r["priority"])
            for r in rows.values()} == {(3, 5, 60, 3)}  # fmt: skip
    assert (rows["a"]["queue"], rows["b"]["pool"], rows["a"]["pool"]) == ("qa", "p1", None)
    types = [(t, task) for t, _, task, _, _ in fast[1]]
    assert types == [("dag.pending", ""), *(("task.pending", t) for t in "abcd"),
                     ("task.queued", "a"), ("task.queued", "b")]  # fmt: skip


def test_a_rerun_with_carried_results_is_written_as_the_model_path_wrote_it(dag):
    run, _ = services.run_schedule_dag(dag_id=dag, options=ScheduleOptions(run_id="first"))
    TaskRun.objects.filter(run=run).update(
        status=COMPLETED, start_time=run.start_time, end_time=run.start_time
    )
    TaskRun.objects.filter(run=run, task_id="d").update(status="failed", exit_code=1)
    Run.objects.filter(pk=run.pk).update(status="failed")
    rerun = services.run_rerun(run_id="first", failed_only=True, reset_params=False, from_task=None)
    task_runs = [
        NewTaskRun(**{f: getattr(tr, f) for f in NewTaskRun._fields})
        for tr in TaskRun.objects.filter(run=rerun).order_by("task_id")
    ]
    # d's upstream c was carried over: d is queued at once, as reading the run back decides
    fast = (_task_runs(rerun.run_id), _events(rerun.run_id))
    assert [(r["task_id"], r["status"], r["carried_from"] is not None) for r in fast[0]] == [
        ("a", COMPLETED, True), ("b", COMPLETED, True), ("c", COMPLETED, True), ("d", QUEUED, False),
    ]  # fmt: skip
    for tr in task_runs:  # as it was created: d still pending
        if tr.task_id == "d":
            task_runs[task_runs.index(tr)] = tr._replace(status=PENDING)
    TaskRun.objects.filter(run=rerun).delete()
    _reference(rerun, task_runs, "reference")
    assert fast == (_task_runs("reference"), _events("reference"))


def test_the_ready_task_runs_given_are_queued_only_while_pending(dag):
    """A run's start queues the roots it is given, never one another transaction moved meanwhile."""
    run, task_runs = services.run_schedule_dag(dag_id=dag, options=ScheduleOptions(run_id="limited"))
    a, b = (tr.id for tr in task_runs if tr.task_id in "ab")
    TaskRun.objects.filter(pk__in=[a, b]).update(status=PENDING, queued_at=None)
    TaskRun.objects.filter(pk=b).update(status="cancelled")
    with transaction.atomic():
        wakeups = state.run_queue_ready(state.run_lock("limited"), [a, b])
    assert [w.task_run_id for w in wakeups] == [a]
    assert TaskRun.objects.get(pk=b).status == "cancelled"
    assert Event.objects.filter(run_id="limited", type="task.queued", task_id="b").count() == 1  # the start's


def test_a_task_run_id_taken_already_is_drawn_again(dag):
    """Ids are not looked up before the insert: the insert finds a clash, and only the clashing
    id is drawn again (with the upstream lists naming it)."""
    _, first = services.run_schedule_dag(dag_id=dag, options=ScheduleOptions(run_id="first"))
    a = next(tr for tr in first if tr.task_id == "a")
    drawn = planning.redraw_ids(first, {tr.id for tr in first} - {a.id})  # a's id is the first run's
    run, inserted = services._create_run(
        opts=ScheduleOptions(run_id="second"), dag_id=dag, context_vars={}, task_runs=drawn,
        actor="tester", action="run.scheduled",
    )  # fmt: skip
    by_task = {tr.task_id: tr for tr in inserted}
    assert by_task["a"].id != a.id and by_task["a"].id.startswith("a_")
    assert [tr.id for tr in inserted if tr.task_id != "a"] == [tr.id for tr in drawn if tr.task_id != "a"]
    assert by_task["c"].upstream == [by_task["a"].id, by_task["b"].id]
    # the dependents list of the redrawn one, written from the final ids
    assert TaskRun.objects.get(pk=by_task["a"].id).dependents == [by_task["c"].id]
    assert sorted(TaskRun.objects.filter(run=run).values_list("id", flat=True)) == sorted(
        tr.id for tr in inserted
    )
    assert TaskRun.objects.get(pk=a.id).run_id == "first"
    assert Event.objects.get(run_id="second", type="task.pending", task_id="a").data["task_run_id"] == (
        by_task["a"].id
    )


def test_the_closure_as_tuples_is_the_closure_as_models(dag):
    models, sources = dependency_closure(["d", "b"]), source_closure(["d", "b"])
    assert sorted(models) == sorted(sources) == ["a", "b", "c", "d"]
    for task_id, source in sources.items():
        task = models[task_id]
        assert source == tuple(getattr(task, f) for f in source._fields)


def test_task_run_ids_that_need_escaping_are_encoded_as_json():
    rows = [NewTaskRun(id='odd"id\\', task_id="t", command="", env={}, queue="q", upstream=[],
                       has_dependents=False, max_attempts=1, retry_delay_seconds=0,
                       timeout_seconds=None, priority=0, pool=None)]  # fmt: skip
    encode = services._id_list_json(rows)
    assert json.loads(encode(['odd"id\\', "x"])) == ['odd"id\\', "x"]
    plain = services._id_list_json([rows[0]._replace(id="t_0a1b2c3d")])
    assert json.loads(plain(["t_0a1b2c3d", "u_00000000"])) == ["t_0a1b2c3d", "u_00000000"]
    assert plain([]) == "[]"
    assert TaskDefinition.objects.count() == 0  # nothing written


@pytest.mark.parametrize("dag_id", ["shape", None])
def test_task_run_events_built_by_postgresql_are_those_built_in_python(dag_id):
    """Any mix of statuses, start and end times (and a subscribed type, written undispatched)."""
    webhook_create(
        name="queued", url="http://127.0.0.1:9/hook", events=["task.queued"], secret="s", headers={},
        filters={},
    )  # fmt: skip
    start = now_ms() - timedelta(seconds=75, milliseconds=250)
    end = start + timedelta(seconds=61, milliseconds=999)
    task_runs = [
        SimpleNamespace(id=f"t{n}_0000000{n}", task_id=f"t{n}", status=status, start_time=s, end_time=e)
        for n, (status, s, e) in enumerate(
            [(PENDING, None, None), (QUEUED, None, None), ("running", start, None),
             ("cancelled", start, end), ("cancelled", None, end), ("completed", end, end)]
        )
    ]  # fmt: skip
    occurred = now_ms()
    for run_id in ("sql", "rows"):
        run = SimpleNamespace(run_id=run_id, dag_id=dag_id)
        if run_id == "sql":
            assert events._emit_sql(task_runs, run, occurred)
        else:
            events._emit_rows(task_runs, run, occurred)
    sql, rows = _events("sql"), _events("rows")
    assert sql == rows
    assert [e[0] for e in sql] == [f"task.{tr.status}" for tr in task_runs]
    assert [e[4] for e in sql] == [tr.status == QUEUED for tr in task_runs]  # undispatched
    assert (sql[3][3]["start_time"], sql[3][3]["end_time"]) == (iso(start), iso(end))
    assert sql[3][3]["duration_seconds"] == 61 and sql[2][3]["duration_seconds"] is None


def test_values_that_would_not_come_back_as_lines_are_refused():
    assert lines(["a", "b"]) == "a\nb"
    assert lines(["a", ""]) is None and lines(["a", ""], nullable=True) == "a\n"
    assert lines(["a\nb"]) is None and lines([]) is None
    task_runs = [SimpleNamespace(id="x\ny", task_id="t", status=PENDING, start_time=None, end_time=None)]
    assert not events._emit_sql(task_runs, SimpleNamespace(run_id="r", dag_id=None), now_ms())
    events.event_emit_task_runs(task_runs, SimpleNamespace(run_id="r", dag_id=None))  # the rows path
    assert [e.data["task_run_id"] for e in Event.objects.filter(run_id="r")] == ["x\ny"]


def test_the_graph_built_by_postgresql_is_the_one_rendered_in_python(api, dag):
    """Byte for byte, in the same order (by start time, then task id; upstream in its order)."""
    run, task_runs = services.run_schedule_dag(dag_id=dag, options=ScheduleOptions(run_id="g\u2028raph"))
    later = now_ms()
    TaskRun.objects.filter(run=run, task_id="b").update(start_time=later - timedelta(seconds=5))
    TaskRun.objects.filter(run=run, task_id="a").update(start_time=later)
    response = api.get(f"/api/runs/{run.run_id}/graph")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    rendered = JSONRenderer().render(run_graph_out(run, graph_of(run)))
    assert response.content == rendered
    body = json.loads(rendered)
    assert [n["task_id"] for n in body["nodes"]] == ["b", "a", "c", "d"]
    ids = {tr.task_id: tr.id for tr in task_runs}
    assert body["edges"] == [{"from": ids["a"], "to": ids["c"]}, {"from": ids["b"], "to": ids["c"]},
                             {"from": ids["c"], "to": ids["d"]}]  # fmt: skip
