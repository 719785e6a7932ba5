"""The scheduler tick: fires every due schedule, each fire time exactly once.

Any number of processes may tick at once (every agent on the control queue does, and
`run_scheduler` can): a schedule is claimed with SELECT ... FOR UPDATE SKIP LOCKED, and its runs
are created in the same transaction that moves its cursor past `now`. A tick killed mid-fire
leaves both or neither; a clock that jumps back finds no schedule due (the cursor never moves
back), one that jumps forward applies the catch-up policy to the fire times it skipped over.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction

from orchestrator.runs.models import Run
from orchestrator.runs.planning import ScheduleOptions
from orchestrator.runs.services import run_schedule_dag, run_schedule_task
from orchestrator.schedules.models import CATCHUP_ALL, CATCHUP_NONE, Schedule, SchedulerTick
from orchestrator.schedules.selectors import schedule_timing
from shared.api import errors
from shared.api.time import iso, now_ms

logger = logging.getLogger(__name__)
TICK_RECORD_KEPT = timedelta(days=1)


def schedules_tick(*, now: datetime | None = None, ticker: str = "") -> int:
    """Fires what is due at `now` (default: the clock), at most SCHEDULER_BATCH_SIZE schedules;
    returns how many runs were made. `ticker` names the process for /api/status."""
    now = now or now_ms()
    made = 0
    skipped: set[str] = set()
    for _ in range(settings.SCHEDULER_BATCH_SIZE):
        claimed = _fire_one(now, skipped)
        if claimed is None:
            break
        made += claimed
    if ticker:
        _record_tick(ticker)
    return made


def _record_tick(ticker: str) -> None:
    """This process's tick time; rows of processes silent for a day go (each `run_scheduler`
    start is a new name), so the table stays as small as the set of live schedulers."""
    at = now_ms()
    SchedulerTick.objects.update_or_create(name=ticker, defaults={"last_tick_at": at})
    SchedulerTick.objects.filter(last_tick_at__lt=at - TICK_RECORD_KEPT).delete()


def _fire_one(now: datetime, skipped: set[str]) -> int | None:
    """One due schedule in one transaction; None when none is left. A schedule that fails
    unexpectedly is rolled back whole, logged, and left for the next tick (not retried in this one,
    so it cannot hold up the others)."""
    schedule = None
    try:
        with transaction.atomic():
            schedule = (
                Schedule.objects.select_for_update(skip_locked=True)
                .filter(paused=False, next_fire_time__lte=now)
                .exclude(pk__in=skipped)
                .order_by("next_fire_time", "id")
                .first()
            )
            if schedule is None:
                return None
            return _fire(schedule, now)
    except Exception:
        if schedule is None:
            raise
        logger.exception("Schedule %s could not be fired; trying again on the next tick", schedule.id)
        skipped.add(schedule.id)
        return 0


def due_fire_times(schedule: Schedule, now: datetime) -> list[datetime]:
    """The fire times from the cursor up to now that the catch-up policy keeps: `all` the most
    recent max_catchup, `latest` the most recent one, `none` the most recent one only if it is no
    older than the misfire grace (a late tick still fires, a missed time is skipped)."""
    if schedule.next_fire_time is None:
        raise RuntimeError("a due schedule has a next fire time")
    limit = schedule.max_catchup if schedule.catchup == CATCHUP_ALL else 1
    due = schedule_timing(schedule).latest_between(schedule.next_fire_time, now, limit)
    if schedule.catchup == CATCHUP_NONE:
        grace = settings.SCHEDULER_MISFIRE_GRACE_SECONDS
        due = [t for t in due if (now - t).total_seconds() <= grace]
    return due


def _fire(schedule: Schedule, now: datetime) -> int:
    made = sum(_make_run(schedule, fire_time) for fire_time in due_fire_times(schedule, now))
    schedule.next_fire_time = schedule_timing(schedule).next_after(now)
    schedule.save(update_fields=["next_fire_time", "last_fire_time", "last_run_id", "last_error"])
    return made


def _make_run(schedule: Schedule, fire_time: datetime) -> int:
    # A fire time with a run already (an edit moved the cursor back over it) is not fired again.
    if Run.objects.filter(schedule_id=schedule.id, fire_time=fire_time).exists():
        return 0
    options = ScheduleOptions(
        context=schedule.context, parameters=dict(schedule.parameters), priority=schedule.priority
    )
    try:
        with transaction.atomic():  # a savepoint: a refused fire time leaves no half of a run
            if schedule.dag_id:
                run, _ = run_schedule_dag(
                    dag_id=schedule.dag_id, options=options, schedule_id=schedule.id, fire_time=fire_time
                )
            else:
                if schedule.task_id is None:
                    raise RuntimeError("a task schedule names its task")
                run, _ = run_schedule_task(
                    task_id=schedule.task_id,
                    options=options,
                    queue=None,
                    schedule_id=schedule.id,
                    fire_time=fire_time,
                )
    except errors.ApplicationError as exc:
        # The target was deleted or changed so that the schedule's parameters no longer fit: this
        # fire time makes no run (it is not retried on every tick); the schedule shows why.
        schedule.last_error = f"{iso(fire_time)}: {exc.message}"
        logger.warning("Schedule %s made no run for %s: %s", schedule.id, iso(fire_time), exc.message)
        return 0
    schedule.last_fire_time, schedule.last_run_id, schedule.last_error = fire_time, run.run_id, ""
    return 1
