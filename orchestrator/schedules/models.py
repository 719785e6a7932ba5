"""Time schedules of a DAG or a task, and the record of which processes tick them.

A schedule's cursor (`next_fire_time`) is the earliest fire time not yet handled. The tick that
fires a schedule creates the runs and moves the cursor in one transaction, with the schedule row
locked, so a fire time is handled once; the unique (schedule_id, fire_time) pair on runs is the
database's own guarantee behind that.
"""

from __future__ import annotations

import uuid

from django.db import models

CATCHUP_NONE, CATCHUP_LATEST, CATCHUP_ALL = "none", "latest", "all"
CATCHUP_POLICIES = (CATCHUP_NONE, CATCHUP_LATEST, CATCHUP_ALL)


def new_schedule_id() -> str:
    return f"sch_{uuid.uuid4().hex[:16]}"


class Schedule(models.Model):
    id = models.CharField(primary_key=True, max_length=100, default=new_schedule_id)
    # Exactly one of the two targets and exactly one of cron/interval (checked by the API and here).
    dag_id = models.CharField(max_length=100, null=True, blank=True, db_index=True)  # noqa: DJ001 - null: a task schedule
    task_id = models.CharField(max_length=100, null=True, blank=True, db_index=True)  # noqa: DJ001 - null: a DAG schedule
    cron = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001 - null: an interval schedule
    interval_seconds = models.PositiveIntegerField(null=True, blank=True)
    timezone = models.CharField(max_length=64, default="UTC")
    parameters = models.JSONField(default=dict)
    context = models.CharField(max_length=100, null=True, blank=True)  # noqa: DJ001 - null is the API's 'none'
    start_date = models.DateTimeField(null=True, blank=True)
    end_date = models.DateTimeField(null=True, blank=True)
    catchup = models.CharField(
        max_length=8, choices=[(p, p) for p in CATCHUP_POLICIES], default=CATCHUP_LATEST
    )
    max_catchup = models.PositiveIntegerField(default=10)
    paused = models.BooleanField(default=False)
    priority = models.IntegerField(default=0)
    next_fire_time = models.DateTimeField(null=True, blank=True)  # null: no fire time left (end_date)
    last_fire_time = models.DateTimeField(null=True, blank=True)
    last_run_id = models.CharField(max_length=128, null=True, blank=True)  # noqa: DJ001 - null: never fired
    last_error = models.TextField(blank=True)  # why the last fire time made no run, if it made none
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ("-created_at", "id")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(dag_id__isnull=True) ^ models.Q(task_id__isnull=True),
                name="orch_schedule_one_target",
            ),
            models.CheckConstraint(
                condition=models.Q(cron__isnull=True) ^ models.Q(interval_seconds__isnull=True),
                name="orch_schedule_one_timing",
            ),
        ]
        indexes = [models.Index(fields=["paused", "next_fire_time"], name="orch_schedule_due")]

    def __str__(self) -> str:
        return self.id


class SchedulerTick(models.Model):
    """The last tick of each scheduler process (an agent or `run_scheduler`): /api/status shows the
    newest, so a scheduler that stopped ticking is seen."""

    name = models.CharField(primary_key=True, max_length=200)
    last_tick_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return self.name
