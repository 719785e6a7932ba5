"""A run's task runs on one time line (a Gantt chart): where each bar starts and how long it is,
in thousandths of the run's span, for an SVG whose view box is 1000 wide. Pure: no queries."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from orchestrator.runs.models import TERMINAL, Run, TaskRun

WIDTH = 1000


@dataclass(frozen=True)
class Bar:
    task_run: TaskRun
    x: int
    width: int


def bars(run: Run, task_runs: list[TaskRun], *, now: datetime | None = None) -> list[Bar]:
    """One bar per task run that started; a running one reaches to now. The span runs from the
    first start to the last end (or now while the run is open)."""
    now = now or timezone.now()
    spans = [(tr, tr.start_time, tr.end_time or now) for tr in task_runs if tr.start_time is not None]
    if not spans:
        return []
    first = min(start for _, start, _ in spans)
    last = max(end for _, _, end in spans)
    if run.status not in TERMINAL:
        last = max(last, now)
    span = max((last - first).total_seconds(), 0.001)

    def at(t: datetime) -> int:
        return round(WIDTH * (t - first).total_seconds() / span)

    # a very short task run stays visible
    return [Bar(tr, at(start), max(at(end) - at(start), 2)) for tr, start, end in spans]
