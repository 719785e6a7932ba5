"""Documents and the content-addressed blobs they point at.

A blob is stored once per SHA-256 of its bytes. Its row is the lock every upload and every release
of those bytes takes (`SELECT ... FOR UPDATE`), and documents refer to it with a protecting foreign
key, so the database itself refuses to drop a blob row some document still needs.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from casemgmt.tenancy.models import Tenant


class Blob(models.Model):
    sha256 = models.CharField(max_length=64, primary_key=True)
    size = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"sha256:{self.sha256}"

    @property
    def key(self) -> str:
        return blob_key(self.sha256)


def blob_key(sha256: str) -> str:
    """Where the bytes live in storage: fanned out by the first hex digits to keep folders small."""
    return f"blobs/{sha256[:2]}/{sha256[2:4]}/{sha256}"


class Document(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    # Null for documents uploaded to the vault without a case.
    case = models.ForeignKey(
        "cases.Case", on_delete=models.CASCADE, null=True, blank=True, related_name="documents"
    )
    blob = models.ForeignKey(Blob, on_delete=models.PROTECT, related_name="documents")
    filename = models.CharField(max_length=255)
    mime_type = models.CharField(max_length=255)
    size = models.BigIntegerField()
    description = models.TextField(blank=True)
    uploaded_at = models.DateTimeField(db_index=True)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ("-uploaded_at", "-id")
        indexes = [
            models.Index(fields=["tenant", "case", "-uploaded_at"], name="document_case_idx"),
            models.Index(fields=["tenant", "uploaded_by"], name="document_uploader_idx"),
        ]

    def __str__(self) -> str:
        return self.filename

    @property
    def content_hash(self) -> str:
        return f"sha256:{self.blob_id}"

    @property
    def audit_resource(self) -> str:
        """Case documents sit under their case, so they belong to the case's audit trail."""
        if self.case_id:
            return f"cases/{self.case_id}/documents/{self.id}"
        return f"documents/{self.id}"


class Erasure(models.Model):
    """One erasure job. Its steps run in order; each commits together with its entry in `steps_done`
    and its counts, so a job cut short is resumed at the first step not done, and redoing a step
    whose commit was lost is harmless."""

    PENDING, RUNNING, COMPLETED, FAILED = "pending", "running", "completed", "failed"
    STATUSES = [(s, s) for s in (PENDING, RUNNING, COMPLETED, FAILED)]
    FULL, DOCUMENTS = "full", "documents"
    SCOPES = [(FULL, "Personal data, documents and audit payloads"), (DOCUMENTS, "Documents only")]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    subject = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    scope = models.CharField(max_length=10, choices=SCOPES)
    reason = models.TextField(blank=True)
    status = models.CharField(max_length=10, choices=STATUSES, default=PENDING)
    # Bumped by every claim; a step runs only for the attempt that currently holds the job.
    attempt = models.PositiveIntegerField(default=0)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # Audit events up to this sequence existed when the erasure was requested.
    request_sequence = models.BigIntegerField(default=0)
    steps_done = models.JSONField(default=list)
    counts = models.JSONField(default=dict)
    cases_touched = models.JSONField(default=list)
    # Blobs of deleted documents, released by their own step (storage is outside the transaction).
    blobs = models.JSONField(default=list)
    report = models.JSONField(null=True, blank=True)
    error = models.CharField(max_length=200, blank=True)
    requested_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-requested_at",)
        indexes = [models.Index(fields=["status", "heartbeat_at"], name="erasure_status_idx")]
        constraints = [
            # One unfinished job per principal and scope, even when two requests arrive at once.
            models.UniqueConstraint(
                fields=["tenant", "subject", "scope"],
                condition=models.Q(status__in=["pending", "running"]),
                name="erasure_one_unfinished_per_subject",
            )
        ]

    def __str__(self) -> str:
        return f"erasure {self.id} ({self.status})"
