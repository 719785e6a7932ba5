"""Workflow definitions (drafts, then frozen published versions) and per-case step state.

A `Workflow` row is one version of one workflow: editing a published workflow means creating a
new draft (next version). A case keeps the `Workflow` version it was created with, for life.
A human task is a `CaseStep` of type `task` that has been activated.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from casemgmt.tenancy.models import Tenant


class Workflow(models.Model):
    DRAFT, PUBLISHED, WITHDRAWN = "draft", "published", "withdrawn"
    STATUSES = [(DRAFT, "Draft"), (PUBLISHED, "Published"), (WITHDRAWN, "Withdrawn")]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="workflows")
    case_type_key = models.CharField(max_length=100)
    name = models.CharField(max_length=200)
    version = models.PositiveIntegerField(default=1)
    status = models.CharField(max_length=10, choices=STATUSES, default=DRAFT)
    # The definition as posted (steps with id, name, type, dependsOn, condition and per-type config).
    definition = models.JSONField(default=dict)
    is_default = models.BooleanField(default=False)
    auto_close = models.BooleanField(default=False)
    sla_hours = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)
    published_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("case_type_key", "version")
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "case_type_key"],
                condition=models.Q(is_default=True),
                name="workflow_one_default_per_case_type",
            ),
            models.UniqueConstraint(
                fields=["tenant", "case_type_key", "version"], name="workflow_unique_version"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.version} ({self.status})"


class CaseStep(models.Model):
    PENDING, ACTIVE, COMPLETED, SKIPPED, FAILED = "pending", "active", "completed", "skipped", "failed"
    STATUSES = [(s, s) for s in (PENDING, ACTIVE, COMPLETED, SKIPPED, FAILED)]

    id = models.BigAutoField(primary_key=True)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    case = models.ForeignKey("cases.Case", on_delete=models.CASCADE, related_name="steps")
    step_id = models.CharField(max_length=100)
    name = models.CharField(max_length=200)
    type = models.CharField(max_length=20)
    position = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=10, choices=STATUSES, default=PENDING)
    activated_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    # Automated steps: when the running attempt counts as lost (worker crash, lost message) and
    # may be run again by a redelivery or the periodic scan. Null until the first attempt starts.
    attempt_deadline = models.DateTimeField(null=True, blank=True)
    # How many times the step has been entered: a rework route back to it (or before it) archives
    # the finished run in `StepRun` and enters it again with the next number.
    iteration = models.PositiveIntegerField(default=1)
    # Steps that finish on their own time (`timer`) or whose activation failed (a `case` step that
    # could not create its child, a `timer` whose `until` did not render): when the due-steps sweep
    # completes (or, with `error` set, fails) the active step. Null otherwise.
    fire_at = models.DateTimeField(null=True, blank=True)
    # `wait` steps: the message name that completes the step while it is active.
    message = models.CharField(max_length=100, blank=True)
    # `case` steps: the child case the step created; its close completes, its cancel fails the step.
    child_case = models.ForeignKey(
        "cases.Case", on_delete=models.SET_NULL, null=True, blank=True, related_name="parent_steps"
    )

    # Human-task fields (type "task", or an agent step escalated to a human).
    is_task = models.BooleanField(default=False)
    role = models.CharField(max_length=100, blank=True)
    assigned_to = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="assigned_steps",
    )
    claimed_at = models.DateTimeField(null=True, blank=True)
    due_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=200, blank=True)
    completed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    draft = models.JSONField(null=True, blank=True)
    draft_saved_at = models.DateTimeField(null=True, blank=True)
    escalated = models.BooleanField(default=False)
    escalated_at = models.DateTimeField(null=True, blank=True)
    escalation_reason = models.TextField(blank=True)
    escalated_to = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # The step's `team`: only its members may claim the task or have it assigned.
    candidate_team = models.ForeignKey(
        "accounts.Team", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ("case", "position")
        constraints = [models.UniqueConstraint(fields=["case", "step_id"], name="case_step_unique")]
        indexes = [
            models.Index(fields=["tenant", "type", "status", "due_at"], name="step_inbox_idx"),
            models.Index(fields=["status", "due_at", "escalated"], name="step_sla_idx"),
            models.Index(fields=["tenant", "is_task", "status", "assigned_to"], name="step_task_idx"),
            models.Index(
                fields=["fire_at"], condition=models.Q(fire_at__isnull=False), name="step_fire_at_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.case_id}/{self.step_id} ({self.status})"


class StepRun(models.Model):
    """An earlier run of a case step, kept when a rework route sent the case back before it (the
    case's workflow history). The step's current run stays on its `CaseStep` row."""

    id = models.BigAutoField(primary_key=True)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    case = models.ForeignKey("cases.Case", on_delete=models.CASCADE, related_name="step_runs")
    step_id = models.CharField(max_length=100)
    type = models.CharField(max_length=20)
    iteration = models.PositiveIntegerField()
    status = models.CharField(max_length=10)
    activated_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    outcome = models.CharField(max_length=200, blank=True)
    error = models.TextField(blank=True)
    completed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    child_case = models.ForeignKey(
        "cases.Case", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    archived_at = models.DateTimeField()

    class Meta:
        ordering = ("case", "id")
        indexes = [models.Index(fields=["case", "id"], name="step_run_case_idx")]

    def __str__(self) -> str:
        return f"{self.case_id}/{self.step_id}#{self.iteration} ({self.status})"


class TeamRotation(models.Model):
    """Where `round_robin` stands for one step of one case type over one team: the member it gave
    the last task to. Its row is the lock that serializes concurrent activations of that step."""

    id = models.BigAutoField(primary_key=True)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    team = models.ForeignKey("accounts.Team", on_delete=models.CASCADE, related_name="+")
    case_type_key = models.CharField(max_length=100)
    step_id = models.CharField(max_length=100)
    last_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["team", "case_type_key", "step_id"], name="team_rotation_unique")
        ]

    def __str__(self) -> str:
        return f"{self.team_id}/{self.case_type_key}/{self.step_id}"
