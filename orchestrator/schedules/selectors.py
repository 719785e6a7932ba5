"""Reads over schedules and the scheduler's liveness."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db.models import Count, Max, Q, QuerySet

from orchestrator.schedules.models import Schedule, SchedulerTick
from orchestrator.schedules.timing import Timing, zone
from shared.api import errors
from shared.api.time import now_ms

PREVIEW_COUNT = 5


def schedule_get(*, schedule_id: str) -> Schedule:
    schedule = Schedule.objects.filter(pk=schedule_id).first()
    if schedule is None:
        raise errors.NotFound(f"Schedule {schedule_id} not found.")
    return schedule


def schedule_list(
    *, dag_id: str | None = None, task_id: str | None = None, paused: bool | None = None
) -> QuerySet[Schedule]:
    """Newest first; `dag_id`, `task_id` and `paused` filter (None: any)."""
    qs = Schedule.objects.all()
    if dag_id:
        qs = qs.filter(dag_id=dag_id)
    if task_id:
        qs = qs.filter(task_id=task_id)
    if paused is not None:
        qs = qs.filter(paused=paused)
    return qs.order_by("-created_at", "id")


def schedule_timing(schedule: Schedule) -> Timing:
    """Interval fire times count from the start date, or else from when the schedule was made."""
    anchor = (schedule.start_date or schedule.created_at).astimezone(UTC).replace(microsecond=0)
    return Timing(
        cron=schedule.cron,
        interval_seconds=schedule.interval_seconds,
        tz=zone(schedule.timezone),
        anchor=anchor,
        start=schedule.start_date,
        end=schedule.end_date,
    )


def next_fire_times(schedule: Schedule, *, now: datetime | None = None) -> list[datetime]:
    """The next fire times at or after now, whether or not the schedule is paused."""
    return schedule_timing(schedule).upcoming(now or now_ms(), PREVIEW_COUNT)


def scheduler_status() -> dict:
    """`healthy` when some scheduler process ticked within three tick periods; otherwise
    `degraded` if an unpaused schedule has a fire time left (it would not fire), else `idle`."""
    period = settings.SCHEDULER_TICK_SECONDS
    cutoff = now_ms() - timedelta(seconds=3 * period)
    ticks = SchedulerTick.objects.aggregate(
        last=Max("last_tick_at"), live=Count("pk", filter=Q(last_tick_at__gte=cutoff))
    )
    row = Schedule.objects.aggregate(
        n_total=Count("pk"),
        n_paused=Count("pk", filter=Q(paused=True)),
        n_active=Count("pk", filter=Q(paused=False, next_fire_time__isnull=False)),
    )
    counts = {"total": row["n_total"], "active": row["n_active"], "paused": row["n_paused"]}
    if ticks["live"]:
        status = "healthy"
    else:
        status = "degraded" if counts["active"] else "idle"
    return {
        "status": status,
        "last_tick_at": ticks["last"],
        "tick_seconds": period,
        "count": ticks["live"],
        "schedules": counts,
    }
