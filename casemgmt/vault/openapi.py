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
