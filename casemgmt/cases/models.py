"""Case types (immutable, versioned schemas) and cases."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from casemgmt.tenancy.models import Tenant


class CaseType(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="case_types")
    key = models.CharField(max_length=100)
    version = models.PositiveIntegerField(default=1)
    display_name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    schema = models.JSONField()
    prefix = models.CharField(max_length=8)
    # slaDeadline = createdAt + slaHours of the case type, else of the bound workflow, else the
    # tenant's default SLA hours.
    sla_hours = models.PositiveIntegerField(null=True, blank=True)
    # `accessTeams`: team ids; when any, only their members and holders of admin:* see the cases.
    # One value per key (every version carries it), copied onto each case as `Case.access_teams`.
    access_teams = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )

    class Meta:
        ordering = ("key", "version")
        constraints = [
            models.UniqueConstraint(fields=["tenant", "key", "version"], name="case_type_unique_key_version")
        ]

    def __str__(self) -> str:
        return f"{self.key} v{self.version}"


class CaseCounter(models.Model):
    """Case numbers per tenant and case type key; the row is locked by the creating transaction."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=100)
    last_number = models.PositiveBigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "key"], name="case_counter_unique")]

    def __str__(self) -> str:
        return f"{self.key}: {self.last_number}"


class Case(models.Model):
    ACTIVE, CLOSED, CANCELLED = "active", "closed", "cancelled"
    STATUSES = [(ACTIVE, "Active"), (CLOSED, "Closed"), (CANCELLED, "Cancelled")]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="cases")
    case_type = models.ForeignKey(CaseType, on_delete=models.PROTECT, related_name="cases")
    case_number = models.CharField(max_length=32)
    display_name = models.CharField(max_length=300, blank=True)
    status = models.CharField(max_length=10, choices=STATUSES, default=ACTIVE)
    data = models.JSONField(default=dict)
    version = models.PositiveIntegerField(default=1)
    workflow_version = models.ForeignKey(
        "workflows.Workflow", on_delete=models.PROTECT, null=True, blank=True, related_name="cases"
    )
    # Set by case_create (not auto_now_add) so that slaDeadline is computed from the same instant.
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)
    sla_deadline = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=200, blank=True)
    status_reason = models.TextField(blank=True)
    # Case number, display name and the text values inside `data`, kept by the services. On
    # PostgreSQL a generated tsvector column over it carries the GIN index (migration 0003).
    search_text = models.TextField(blank=True, default="")
    # The case type's accessTeams as comma-separated ids ("" = open to the tenant): what the
    # database's `team_access` policy compares with the caller's `app.team_ids` on every read.
    access_teams = models.TextField(blank=True, default="")

    class Meta:
        ordering = ("-created_at",)
        constraints = [
            models.UniqueConstraint(fields=["tenant", "case_number"], name="case_number_unique_per_tenant")
        ]
        indexes = [
            # The list's default order (newest first, id breaking ties) and its created ranges.
            models.Index(fields=["tenant", "-created_at", "id"], name="case_tenant_created_id"),
            # Status filters and sorts; the included columns let the dashboard count a million cases
            # from this index alone (an index-only scan) instead of reading every row of the table.
            models.Index(
                fields=["tenant", "status", "created_at"],
                # access_teams: read by the team_access policy, so the scans stay index-only.
                include=["case_type", "closed_at", "sla_deadline", "access_teams"],
                name="case_tenant_status_cover",
            ),
            models.Index(fields=["tenant", "case_type", "created_at"], name="case_tenant_type_created"),
            models.Index(fields=["tenant", "sla_deadline"], name="case_tenant_deadline"),
            # Plus, on PostgreSQL only (migration 0005; SQLite indexes take no NULLS LAST),
            # `case_tenant_deadline_desc` for sortBy=deadline&order=desc.
        ]

    def __str__(self) -> str:
        return self.case_number


class CaseComment(models.Model):
    """A plain-text note on a case, stored and returned exactly as written (never rendered as HTML)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    body = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("created_at", "id")
        indexes = [models.Index(fields=["case", "created_at"], name="case_comment_order")]

    def __str__(self) -> str:
        return f"{self.case_id}/{self.id}"
