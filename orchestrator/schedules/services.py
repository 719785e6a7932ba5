"""Schedule writes: create, replace, delete, pause and resume. Firing is in `firing.py`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction

from orchestrator.audit.services import SYSTEM_ACTOR, record
from orchestrator.definitions import environment
from orchestrator.definitions.models import Context, Dag, TaskDefinition
from orchestrator.definitions.selectors import dependency_closure
from orchestrator.runs.planning import split_parameters
from orchestrator.schedules.models import CATCHUP_LATEST, Schedule
from orchestrator.schedules.selectors import schedule_timing
from shared.api import errors
from shared.api.problems import Problems
from shared.api.time import now_ms


@dataclass
class ScheduleSpec:
    """Everything a client sets on a schedule (a create or a full replace)."""

    dag_id: str | None = None
    task_id: str | None = None
    cron: str | None = None
    interval_seconds: int | None = None
    timezone: str = "UTC"
    parameters: dict[str, Any] = field(default_factory=dict)
    context: str | None = None
    start_date: datetime | None = None
    end_date: datetime | None = None
    catchup: str = CATCHUP_LATEST
    max_catchup: int = 10
    paused: bool = False
    priority: int = 0


def _spec_changes(spec: ScheduleSpec) -> dict[str, Any]:
    """What the schedule fires and when; parameter names only, since values may be credentials."""
    return {
        "dag_id": spec.dag_id, "task_id": spec.task_id, "cron": spec.cron,
        "interval_seconds": spec.interval_seconds, "timezone": spec.timezone,
        "parameters": sorted(spec.parameters), "context": spec.context, "paused": spec.paused,
    }  # fmt: skip


def _check_target(spec: ScheduleSpec) -> None:
    """Unknown DAG or task: 404. Unknown context or parameters no run of the target could take: 400,
    now rather than at every fire time."""
    if spec.dag_id is not None:
        dag = Dag.objects.filter(pk=spec.dag_id).first()
        if dag is None:
            raise errors.NotFound(f"DAG {spec.dag_id} not found.")
        roots, default_task = [entry["id"] for entry in dag.tasks], None
    else:
        if not TaskDefinition.objects.filter(pk=spec.task_id).exists():
            raise errors.NotFound(f"Task {spec.task_id} not found.")
        roots, default_task = [spec.task_id], spec.task_id
    p = Problems()
    if spec.context and not Context.objects.filter(pk=spec.context).exists():
        p.add("context", f"unknown context: {spec.context}")
    definitions = dependency_closure(roots)
    per_task = split_parameters(p, spec.parameters, set(definitions), default_task=default_task)
    environment.check_allowed(p, env_vars={}, per_task=per_task, definitions=definitions)
    p.raise_if_any()


def _apply(schedule: Schedule, spec: ScheduleSpec, now: datetime) -> Schedule:
    for name, value in spec.__dict__.items():
        setattr(schedule, name, value)
    schedule.updated_at = now
    # Fire times before the schedule was made or replaced are never fired: no burst on creation.
    schedule.next_fire_time = schedule_timing(schedule).next_after(now)
    schedule.last_error = ""
    return schedule


@transaction.atomic
def schedule_create(*, schedule_id: str | None, spec: ScheduleSpec, actor: str = SYSTEM_ACTOR) -> Schedule:
    _check_target(spec)
    now = now_ms()
    schedule = Schedule(created_at=now)
    if schedule_id:
        schedule.id = schedule_id
    _apply(schedule, spec, now)
    try:
        with transaction.atomic():
            schedule.save(force_insert=True)
    except IntegrityError:
        raise errors.AlreadyExists(f"Schedule {schedule.id} already exists.", field="id") from None
    record(
        actor=actor,
        action="schedule.created",
        resource=f"schedules/{schedule.id}",
        changes=_spec_changes(spec),
    )
    return schedule


def _locked(schedule_id: str) -> Schedule:
    """Waits for a tick firing this schedule to commit, so an edit never interleaves with a fire."""
    schedule = Schedule.objects.select_for_update().filter(pk=schedule_id).first()
    if schedule is None:
        raise errors.NotFound(f"Schedule {schedule_id} not found.")
    return schedule


@transaction.atomic
def schedule_update(*, schedule_id: str, spec: ScheduleSpec, actor: str = SYSTEM_ACTOR) -> Schedule:
    """A full replace; the cursor restarts at the first fire time after now."""
    schedule = _locked(schedule_id)
    _check_target(spec)
    _apply(schedule, spec, now_ms())
    schedule.save()
    record(
        actor=actor,
        action="schedule.updated",
        resource=f"schedules/{schedule_id}",
        changes=_spec_changes(spec),
    )
    return schedule


@transaction.atomic
def schedule_delete(*, schedule_id: str, actor: str = SYSTEM_ACTOR) -> None:
    """Runs it made stay, with their schedule_id and fire_time."""
    _locked(schedule_id).delete()
    record(actor=actor, action="schedule.deleted", resource=f"schedules/{schedule_id}")


@transaction.atomic
def schedule_set_paused(*, schedule_id: str, paused: bool, actor: str = SYSTEM_ACTOR) -> Schedule:
    """Pause keeps the cursor; on resume the next tick applies the catch-up policy to the fire
    times missed meanwhile, like after any other gap."""
    schedule = _locked(schedule_id)
    if schedule.paused != paused:
        schedule.paused, schedule.updated_at = paused, now_ms()
        schedule.save(update_fields=["paused", "updated_at"])
    action = "schedule.paused" if paused else "schedule.resumed"
    record(actor=actor, action=action, resource=f"schedules/{schedule_id}")
    return schedule
