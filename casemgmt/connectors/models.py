"""Connector state: tenant configuration (encrypted), the outbound delivery outbox, invocation logs."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from casemgmt.tenancy.models import Tenant


class ConnectorConfig(models.Model):
    """A tenant's configuration of one connector. The whole configuration is one Fernet token:
    nothing of it (secret or not) is readable from the database without a key."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=50)
    config_encrypted = models.TextField()
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "key"], name="connector_config_unique")]

    def __str__(self) -> str:
        return f"{self.tenant_id}/{self.key}"


class Delivery(models.Model):
    """One outbound call in the outbox: written in the transaction of the case change that causes
    it, sent by a worker after commit, retried, dead-lettered after its last attempt.

    Its id is the idempotency key of the call: the same for every attempt and redelivery."""

    PENDING, SENDING, DELIVERED, DEAD = "pending", "sending", "delivered", "dead"
    STATUSES = [(s, s) for s in (PENDING, SENDING, DELIVERED, DEAD)]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    connector = models.CharField(max_length=50)
    action = models.CharField(max_length=100)
    case = models.ForeignKey("cases.Case", on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    step = models.ForeignKey(
        "workflows.CaseStep", on_delete=models.CASCADE, null=True, blank=True, related_name="deliveries"
    )
    # Inputs with their template expressions rendered when the row was written (a snapshot of the
    # case at that moment). `render_error` set means they could not be rendered: nothing is sent.
    inputs = models.JSONField(default=dict)
    render_error = models.TextField(blank=True)
    status = models.CharField(max_length=10, choices=STATUSES, default=PENDING)
    attempts = models.PositiveIntegerField(default=0)
    max_attempts = models.PositiveIntegerField(default=4)
    next_attempt_at = models.DateTimeField()
    # While `sending`: when the running attempt counts as lost (the worker died) and the sweep
    # may start the next one.
    claimed_until = models.DateTimeField(null=True, blank=True)
    last_status = models.IntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    result = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    replays = models.PositiveIntegerField(default=0)

    class Meta:
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="delivery_due_idx"),
            models.Index(fields=["tenant", "status", "created_at"], name="delivery_tenant_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.connector}.{self.action} {self.id} ({self.status})"


class Invocation(models.Model):
    """The log of one connector call (one attempt): what was sent where, what came back.

    Headers are stored redacted; URL, body excerpt and error have every known secret scrubbed."""

    STEP, TEST, REPLAY = "step", "test", "replay"

    id = models.BigAutoField(primary_key=True)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    connector = models.CharField(max_length=50)
    action = models.CharField(max_length=100)
    source = models.CharField(max_length=10, default=STEP)
    delivery = models.ForeignKey(Delivery, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    case_id = models.UUIDField(null=True, blank=True)
    step_id = models.CharField(max_length=100, blank=True)
    attempt = models.PositiveIntegerField(default=1)
    url = models.TextField(blank=True)
    method = models.CharField(max_length=10, blank=True)
    request_headers = models.JSONField(default=dict)
    status_code = models.IntegerField(null=True, blank=True)
    response_excerpt = models.TextField(blank=True)
    latency_ms = models.PositiveIntegerField(default=0)
    success = models.BooleanField(default=False)
    error_code = models.CharField(max_length=50, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "created_at"], name="invocation_tenant_idx"),
            models.Index(fields=["connector", "action"], name="invocation_metric_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.connector}.{self.action} {self.status_code or self.error_code}"
