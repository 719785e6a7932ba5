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
    started = [tr for tr in task_runs if tr.start_time is not None]
    if not started:
        return []
    now = now or timezone.now()
    first = min(tr.start_time for tr in started)  # type: ignore[type-var]
    ends = [tr.end_time or now for tr in started]
    last = max(ends) if run.status in TERMINAL else max([*ends, now])
    span = max((last - first).total_seconds(), 0.001)

    def at(t: datetime) -> int:
        return round(WIDTH * (t - first).total_seconds() / span)

    out = []
    for tr, end in zip(started, ends, strict=True):
        x = at(tr.start_time)  # type: ignore[arg-type]
        out.append(Bar(tr, x, max(at(end) - x, 2)))  # a very short task run stays visible
    return out
