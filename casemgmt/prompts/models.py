"""Prompt templates: every version is its own row and is kept for good."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from casemgmt.tenancy.models import Tenant


class PromptTemplate(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="prompt_templates")
    name = models.CharField(max_length=100)
    version = models.PositiveIntegerField()
    description = models.TextField(blank=True)
    template = models.TextField()
    model = models.CharField(max_length=200, blank=True)
    temperature = models.FloatField(null=True, blank=True)
    max_tokens = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )

    class Meta:
        ordering = ("name", "version")
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "name", "version"], name="prompt_template_unique_version"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"
