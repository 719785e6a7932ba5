"""The grid of a DAG's recent runs: one column per run (oldest left, as time reads), one row per
task, each cell the task run's status (Airflow's grid view). Rows keep the graph's reading order of
the newest run, so they do not move between refreshes; tasks only older runs had come last."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.utils import timezone

from orchestrator.runs import selectors as run_selectors
from orchestrator.runs.models import Run, TaskRun

GRID_RUNS = 25


BAR_HEIGHT = 40  # the longest run's duration bar, in the SVG's units


@dataclass(frozen=True)
class Column:
    run: Run
    bar: int  # the run's duration bar: the longest run (so far) fills the column's BAR_HEIGHT
    bar_y: int


@dataclass
class Grid:
    columns: list[Column]
    rows: list[tuple[str, list[TaskRun | None]]]  # task id, then its task run in each run (or none)


def _columns(runs: list[Run]) -> list[Column]:
    now = timezone.now()
    took = [((r.end_time or now) - r.start_time).total_seconds() for r in runs]
    longest = max(took, default=0) or 1
    heights = [max(round(BAR_HEIGHT * seconds / longest), 1) for seconds in took]
    return [Column(run, h, BAR_HEIGHT - h) for run, h in zip(runs, heights, strict=True)]


def build(dag_id: str, order: Callable[[list[TaskRun]], list[TaskRun]], limit: int = GRID_RUNS) -> Grid:
    runs = list(run_selectors.run_list(dag_id=dag_id)[:limit])
    runs.reverse()
    run_selectors.with_counts(runs)
    by_run: dict[str, dict[str, TaskRun]] = {r.run_id: {} for r in runs}
    for tr in run_selectors.task_runs_of_runs(list(by_run)):
        by_run[tr.run_id][tr.task_id] = tr
    task_ids = [tr.task_id for tr in order(list(by_run[runs[-1].run_id].values()))] if runs else []
    older = sorted({t for cells in by_run.values() for t in cells} - set(task_ids))
    rows = [(task_id, [by_run[r.run_id].get(task_id) for r in runs]) for task_id in task_ids + older]
    return Grid(_columns(runs), rows)
