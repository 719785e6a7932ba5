"""A tenant and its settings: branding, terminology and themes."""

from __future__ import annotations

import uuid

from django.db import models

DEFAULT_TERMINOLOGY = {
    "case": "Case",
    "cases": "Cases",
    "task": "Task",
    "tasks": "Tasks",
    "step": "Step",
    "steps": "Steps",
    "inbox": "Inbox",
}


# Largest SLA a tenant may set: 10 years, so createdAt + hours never overflows a timestamp.
DEFAULT_SLA_HOURS_MAX = 87600


class Tenant(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200, unique=True)
    # Hours from creation to a new case's slaDeadline when neither its case type nor its workflow
    # sets slaHours; null: the service default (settings.CASE_DEFAULT_SLA_HOURS).
    default_sla_hours = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class Branding(models.Model):
    """Stored in the administration form (company_name, colors{...}); the API maps to its own form."""

    tenant = models.OneToOneField(Tenant, on_delete=models.CASCADE, related_name="branding")
    company_name = models.CharField(max_length=200)
    logo_url = models.URLField(max_length=500, blank=True)
    favicon_url = models.URLField(max_length=500, blank=True)
    colors = models.JSONField(default=dict)
    powered_by = models.CharField(max_length=200, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = verbose_name_plural = "branding"  # one per tenant: never "brandings"

    def __str__(self) -> str:
        return f"Branding of {self.tenant}"


class Terminology(models.Model):
    tenant = models.OneToOneField(Tenant, on_delete=models.CASCADE, related_name="terminology")
    labels = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = verbose_name_plural = "terminology"  # one per tenant: never "terminologys"

    def __str__(self) -> str:
        return f"Terminology of {self.tenant}"


class Theme(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="themes")
    name = models.CharField(max_length=100)
    is_default = models.BooleanField(default=False)
    css_variables = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("created_at", "name")
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="theme_unique_name_per_tenant"),
            models.UniqueConstraint(
                fields=["tenant"], condition=models.Q(is_default=True), name="theme_one_default_per_tenant"
            ),
        ]

    def __str__(self) -> str:
        return self.name
