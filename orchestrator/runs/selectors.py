"""Reads over runs, task runs, logs and queues."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import Count, Q, QuerySet

from orchestrator.definitions.models import Pool
from orchestrator.runs.models import COMPLETED, FAILED, QUEUED, RUNNING, Run, TaskLogLine, TaskRun
from shared.api import errors
from shared.api.querying import Sort

RUN_SORTS = {
    "run_id": "run_id",
    "dag_id": "dag_id",
    "status": "status",
    "start_time": "start_time",
    "end_time": "end_time",
}
RUN_STATUSES = ("pending", "running", "paused", "completed", "failed", "cancelled")


def with_counts(runs: list[Run]) -> list[Run]:
    """Task run counts for one page of runs, in one grouped query (not an annotation over every
    run in the table before the page is cut)."""
    counts = {
        row["run_id"]: row
        for row in TaskRun.objects.filter(run_id__in=[r.run_id for r in runs])
        .values("run_id")
        .annotate(
            task_count=Count("id"),
            completed_tasks=Count("id", filter=Q(status=COMPLETED)),
            failed_tasks=Count("id", filter=Q(status=FAILED)),
        )
        .order_by()
    }
    for run in runs:
        row = counts.get(run.run_id, {})
        run.task_count = row.get("task_count", 0)
        run.completed_tasks = row.get("completed_tasks", 0)
        run.failed_tasks = row.get("failed_tasks", 0)
    return runs


def run_list(
    *,
    status: str | None = None,
    dag_id: str | None = None,
    schedule_id: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    sort: Sort | None = None,
) -> QuerySet[Run]:
    """Runs started between `since` and `until` (inclusive); newest first unless `sort` (over
    `RUN_SORTS`) says otherwise."""
    qs = Run.objects.all()
    if status:
        qs = qs.filter(status=status)
    if dag_id:
        qs = qs.filter(dag_id=dag_id)
    if schedule_id:
        qs = qs.filter(schedule_id=schedule_id)
    if since:
        qs = qs.filter(start_time__gte=since)
    if until:
        qs = qs.filter(start_time__lte=until)
    return qs.order_by(*(sort.order_by(RUN_SORTS) if sort else ["-start_time", "run_id"]))


def run_get(run_id: str) -> Run:
    run = Run.objects.filter(pk=run_id).first()
    if run is None:
        raise errors.NotFound(f"Run {run_id} not found.")
    return with_counts([run])[0]


def task_runs_of(run: Run) -> list[TaskRun]:
    return list(run.task_runs.order_by("start_time", "task_id"))


def task_runs_of_runs(run_ids: list[str]) -> list[TaskRun]:
    """The task runs of several runs (the console's grid), by run and task."""
    return list(TaskRun.objects.filter(run_id__in=run_ids).order_by("run_id", "task_id", "id"))


def graph_of(run: Run) -> list[tuple[str, str, str, list[str]]]:
    """(task run id, task id, status, upstream task run ids) of each task run, in the order of
    `task_runs_of`: the graph of a large DAG needs no whole rows."""
    return list(
        run.task_runs.order_by("start_time", "task_id").values_list("id", "task_id", "status", "upstream")
    )


# The graph's nodes and edges as the JSON the API writes (compact, its keys in its order), each
# array's elements joined by PostgreSQL, in the order of `graph_of`.
GRAPH_JSON_SQL = """
SELECT (SELECT coalesce(string_agg('{"id":' || to_json(t.id)::text || ',"task_id":' || to_json(t.task_id)::text
                                   || ',"status":' || to_json(t.status)::text || '}', ','
                                   ORDER BY t.start_time, t.task_id), '')
          FROM orch_runs_taskrun t WHERE t.run_id = %(run)s),
       (SELECT coalesce(string_agg('{"from":' || to_json(u.up)::text || ',"to":' || to_json(t.id)::text || '}', ','
                                   ORDER BY t.start_time, t.task_id, u.n), '')
          FROM orch_runs_taskrun t CROSS JOIN LATERAL jsonb_array_elements_text(t.upstream) WITH ORDINALITY AS u(up, n)
         WHERE t.run_id = %(run)s)
"""


def graph_json(run: Run) -> tuple[str, str] | None:
    """PostgreSQL: the elements of the graph's `nodes` and `edges` arrays, as JSON text (None
    elsewhere: `graph_of`). A 100,000-task run's graph read as rows and encoded in Python cost half
    a second of Python; here it is one statement and two texts."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute(GRAPH_JSON_SQL, {"run": run.run_id})
        nodes, edges = cursor.fetchone()
    return nodes, edges


def logs_by_task_run(task_run_ids: list[str]) -> dict[str, str]:
    joined: dict[str, list[str]] = {t: [] for t in task_run_ids}
    for tr_id, line in (
        TaskLogLine.objects.filter(task_run_id__in=task_run_ids)
        .order_by("id")
        .values_list("task_run_id", "line")
    ):
        joined[tr_id].append(line)
    return {t: "\n".join(lines) for t, lines in joined.items()}


def task_run_get(task_run_id: str) -> TaskRun:
    tr = TaskRun.objects.filter(pk=task_run_id).first()
    if tr is None:
        raise errors.NotFound(f"Task run {task_run_id} not found.")
    return tr


def task_logs(
    *, task_run: TaskRun, tail: int | None = None, since: datetime | None = None
) -> tuple[list[str], bool]:
    """Lines (oldest first) after `since`, the last `tail` of them when asked. `has_more` is true
    when stored lines were left out by `tail` or the task run may still write more."""
    qs = TaskLogLine.objects.filter(task_run=task_run)
    if since:
        qs = qs.filter(at__gt=since)
    if tail:
        lines = list(qs.order_by("-id").values_list("line", flat=True)[: tail + 1])
        omitted = len(lines) > tail
        lines = list(reversed(lines[:tail]))
    else:
        lines, omitted = list(qs.order_by("id").values_list("line", flat=True)), False
    return lines, omitted or task_run.status not in ("completed", "failed", "cancelled")


def task_log_lines(*, task_run: TaskRun, limit: int) -> list[tuple[int, str]]:
    """The first `limit` stored lines with their ids: a follower resumes after the last id."""
    return list(
        TaskLogLine.objects.filter(task_run=task_run).order_by("id").values_list("id", "line")[:limit]
    )


@dataclass(frozen=True)
class PoolState:
    name: str
    slots: int
    used: int  # task runs of the pool running now
    queued: int  # task runs of the pool waiting to be claimed


def pool_list() -> list[PoolState]:
    """Every pool with its slots in use and its task runs waiting for one (a pool is defined in
    definitions; what it holds is runs' state, so the read is here)."""
    counts = {
        row["pool"]: row
        for row in TaskRun.objects.filter(pool__isnull=False, status__in=(QUEUED, RUNNING))
        .values("pool")
        .annotate(used=Count("id", filter=Q(status=RUNNING)), queued=Count("id", filter=Q(status=QUEUED)))
        .order_by()
    }
    return [
        PoolState(
            p.name, p.slots, counts.get(p.name, {}).get("used", 0), counts.get(p.name, {}).get("queued", 0)
        )
        for p in Pool.objects.order_by("name")
    ]


def pool_state(pool: Pool) -> PoolState:
    return next(p for p in pool_list() if p.name == pool.name)
