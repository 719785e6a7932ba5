"""Orchestrator runs started by `dag` workflow steps, and the callbacks already applied."""

from __future__ import annotations

import uuid

from django.db import models

from casemgmt.tenancy.models import Tenant


class DagRun(models.Model):
    """One `dag` step execution: scheduled on the orchestrator, then waiting for its callback (or
    the poll). `id` also names the orchestrator run (`case-<hex>`), so a repeated schedule call
    finds the run it already created instead of starting a second one."""

    SCHEDULING, WAITING, DONE = "scheduling", "waiting", "done"
    STATUSES = [(s, s) for s in (SCHEDULING, WAITING, DONE)]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    step = models.OneToOneField("workflows.CaseStep", on_delete=models.CASCADE, related_name="dag_run")
    status = models.CharField(max_length=12, choices=STATUSES, default=SCHEDULING)
    run_id = models.CharField(max_length=128, blank=True)
    created_at = models.DateTimeField()
    # The poll asks the orchestrator after this moment when no callback has resolved the run.
    poll_after = models.DateTimeField()
    # timeoutSeconds of the step: past it, the run is cancelled and the step fails.
    deadline = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["status", "poll_after"], name="dag_run_poll_idx")]

    def __str__(self) -> str:
        return f"{self.run_id or self.id} ({self.status})"


class DagCallback(models.Model):
    """A callback already accepted, by its signature: the same signed bytes sent again (a replay)
    are ignored. Rows older than the timestamp window can go: such a replay fails the window."""

    signature = models.CharField(max_length=100, primary_key=True)
    received_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.signature
