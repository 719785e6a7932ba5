"""Inbound webhooks: per-tenant receivers at `/webhooks/<tenant id>/<path>` and the deliveries they took."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from casemgmt.tenancy.models import Tenant


class InboundWebhook(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="inbound_webhooks")
    # Unique per tenant; the public URL carries the tenant id, so tenants never compete for a path.
    path = models.CharField(max_length=200)
    # The key is shown once; only its SHA-256 is kept (and a prefix to recognise it by).
    key_hash = models.CharField(max_length=64, unique=True)
    key_prefix = models.CharField(max_length=16)
    # The HMAC secret, Fernet-encrypted; empty when deliveries are not signed.
    secret_encrypted = models.TextField(blank=True)
    # Which signed forms a delivery may use: `any` (the body-only `X-Webhook-Signature` too) or
    # `standard` (Standard Webhooks only: id and timestamp signed, replays refused by both).
    ANY_SIGNATURE, STANDARD_SIGNATURE = "any", "standard"
    signature_scheme = models.CharField(max_length=10, default=ANY_SIGNATURE)
    case_type_key = models.CharField(max_length=100)
    # {target JSON pointer in case data: source JSON pointer in the payload}; empty: the whole payload.
    mapping = models.JSONField(default=dict)
    # JSON pointer to a case id or case number in the payload; when it resolves, the delivery merges.
    case_pointer = models.CharField(max_length=200, blank=True)
    # A message name: a delivery naming a case completes that case's active `wait` step of this
    # message (its mapped payload the step's result) instead of merging into the case's data.
    message = models.CharField(max_length=100, blank=True)
    is_active = models.BooleanField(default=True)
    # The agent principal deliveries act as: cases it creates and updates name it in their audit rows.
    principal = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("-created_at", "-id")
        constraints = [
            models.UniqueConstraint(fields=["tenant", "path"], name="inbound_webhook_unique_path"),
        ]

    def __str__(self) -> str:
        return f"/webhooks/{self.tenant_id}/{self.path}"


class InboundDelivery(models.Model):
    CREATED, MERGED, MESSAGE = "created", "merged", "message"

    id = models.BigAutoField(primary_key=True)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    webhook = models.ForeignKey(InboundWebhook, on_delete=models.CASCADE, related_name="deliveries")
    # The sender's delivery id (X-Webhook-Delivery or X-Delivery-Id); null when it sent none, so
    # the partial unique index below leaves id-less deliveries alone.
    delivery_id = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001
    # The body-only `sha256=` signature of a delivery that carried no signed timestamp: the same
    # signed request sent again is a replay (it cannot be told from the first by its age).
    signature_digest = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001
    outcome = models.CharField(max_length=10, blank=True)
    case = models.ForeignKey("cases.Case", on_delete=models.SET_NULL, null=True, related_name="+")
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-received_at", "-id")
        constraints = [
            models.UniqueConstraint(
                fields=["webhook", "delivery_id"],
                condition=models.Q(delivery_id__isnull=False),
                name="inbound_delivery_unique_id",
            ),
            models.UniqueConstraint(
                fields=["webhook", "signature_digest"],
                condition=models.Q(signature_digest__isnull=False),
                name="inbound_delivery_unique_signature",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.webhook_id}/{self.delivery_id or self.id}"
