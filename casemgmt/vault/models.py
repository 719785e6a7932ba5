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
