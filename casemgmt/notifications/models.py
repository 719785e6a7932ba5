"""Email notifications about human tasks: one row per (task, event, recipient), written in the
transaction that caused it and sent after commit by a worker."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from casemgmt.tenancy.models import Tenant
from casemgmt.workflows import task_events


class Notification(models.Model):
    ASSIGNED, ESCALATED, SLA_BREACHED = task_events.ASSIGNED, task_events.ESCALATED, task_events.SLA_BREACHED
    EVENTS = [(ASSIGNED, "Task assigned"), (ESCALATED, "Task escalated"), (SLA_BREACHED, "Task SLA breached")]
    PENDING, SENDING, SENT, SKIPPED, FAILED = "pending", "sending", "sent", "skipped", "failed"
    STATUSES = [(s, s) for s in (PENDING, SENDING, SENT, SKIPPED, FAILED)]

    id = models.BigAutoField(primary_key=True)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    step = models.ForeignKey("workflows.CaseStep", on_delete=models.CASCADE, related_name="notifications")
    event = models.CharField(max_length=20, choices=EVENTS)
    recipient = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=10, choices=STATUSES, default=PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at", "-id")
        constraints = [
            # The idempotency key: a task's event reaches one person once, however often it is raised.
            models.UniqueConstraint(fields=["step", "event", "recipient"], name="notification_once"),
        ]
        indexes = [models.Index(fields=["status", "created_at"], name="notification_status_idx")]

    def __str__(self) -> str:
        return f"{self.event} -> {self.recipient_id} ({self.status})"
