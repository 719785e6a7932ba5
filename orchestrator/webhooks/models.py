"""Webhook registrations and their deliveries (one per matching outbox event), with every attempt."""

from __future__ import annotations

import uuid

from django.db import models

from orchestrator.events.models import Event

# The event types a registration may subscribe to.
EVENT_TYPES = (
    "task.pending", "task.queued", "task.running", "task.completed", "task.failed",
    "dag.pending", "dag.running", "dag.completed", "dag.failed",
    "agent.registered", "agent.offline",
)  # fmt: skip
FILTER_KEYS = ("dag_id", "task_id")


def new_webhook_id() -> str:
    return f"wh_{uuid.uuid4().hex[:16]}"


class Webhook(models.Model):
    id = models.CharField(max_length=32, primary_key=True, default=new_webhook_id, editable=False)
    name = models.CharField(max_length=200)
    url = models.URLField(max_length=2000)
    events = models.JSONField(default=list)
    filters = models.JSONField(default=dict)
    # Both are Fernet tokens: the secret signs payloads and headers often carry credentials.
    secret_encrypted = models.TextField()
    headers_encrypted = models.TextField()
    created_at = models.DateTimeField()

    class Meta:
        ordering = ("created_at", "id")

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"


class Delivery(models.Model):
    PENDING, DELIVERING, SUCCEEDED, FAILED = "pending", "delivering", "succeeded", "failed"
    STATUSES = [(s, s) for s in (PENDING, DELIVERING, SUCCEEDED, FAILED)]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="deliveries")
    # The exact bytes that are signed and sent, fixed once so every retry is byte-identical.
    body = models.TextField()
    status = models.CharField(max_length=16, choices=STATUSES, default=PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField()
    claimed_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["webhook", "event"], name="webhook_delivery_once_per_event")
        ]
        indexes = [models.Index(fields=["status", "next_attempt_at"])]

    def __str__(self) -> str:
        return f"delivery {self.id} ({self.status})"


class DeliveryAttempt(models.Model):
    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_rows")
    number = models.PositiveSmallIntegerField()
    started_at = models.DateTimeField()
    status_code = models.IntegerField(null=True, blank=True)
    latency_ms = models.FloatField()
    error = models.TextField(blank=True)
    succeeded = models.BooleanField()

    class Meta:
        ordering = ("delivery", "number")
        constraints = [
            models.UniqueConstraint(fields=["delivery", "number"], name="webhook_attempt_number_once")
        ]

    def __str__(self) -> str:
        return f"attempt {self.number} of {self.delivery_id}"
