"""Response shapes for the OpenAPI document (the views render plain dicts built by `*_out` in
apis.py; tests check that real responses carry exactly these fields)."""

from __future__ import annotations

from rest_framework import serializers


class DocumentOut(serializers.Serializer):
    id = serializers.UUIDField()
    caseId = serializers.UUIDField(allow_null=True)
    filename = serializers.CharField()
    mimeType = serializers.CharField(help_text="detected from the bytes, not taken from the client")
    size = serializers.IntegerField(help_text="bytes")
    description = serializers.CharField()
    uploadedAt = serializers.DateTimeField()
    uploadedBy = serializers.UUIDField(allow_null=True)


class DocumentUploadOut(DocumentOut):
    contentHash = serializers.CharField(help_text="sha256:<hex> of the bytes")
    signedUrl = serializers.URLField(help_text="download link without credentials, valid for a short time")


class SignedUrlOut(serializers.Serializer):
    url = serializers.URLField()
    expiresAt = serializers.DateTimeField()


class ErasureAcceptedOut(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.CharField(help_text="pending")


class ErasureReportOut(serializers.Serializer):
    erasureId = serializers.UUIDField()
    userId = serializers.UUIDField()
    scope = serializers.CharField(help_text="full or documents")
    reason = serializers.CharField()
    requestedAt = serializers.DateTimeField()
    completedAt = serializers.DateTimeField()
    casesTouched = serializers.ListField(child=serializers.UUIDField())
    counts = serializers.DictField(child=serializers.IntegerField())
    verificationHash = serializers.CharField(
        help_text="sha256:<hex> of the canonical JSON of this report without verificationHash"
    )


class ErasureOut(serializers.Serializer):
    id = serializers.UUIDField()
    userId = serializers.UUIDField()
    scope = serializers.CharField(help_text="full or documents")
    status = serializers.CharField(help_text="pending, running, completed or failed")
    reason = serializers.CharField()
    requestedAt = serializers.DateTimeField()
    completedAt = serializers.DateTimeField(allow_null=True)
    report = ErasureReportOut(allow_null=True)
