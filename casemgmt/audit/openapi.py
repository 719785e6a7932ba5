"""Response shapes of the audit endpoints for the OpenAPI document (one case's trail and the
tenant-wide views); the bodies are rendered in apis.py."""

from __future__ import annotations

from rest_framework import serializers

from shared.audit.openapi import CheckpointOut, CheckpointReportOut


class AuditEventOut(serializers.Serializer):
    id = serializers.UUIDField()
    timestamp = serializers.DateTimeField()
    actor = serializers.CharField()
    action = serializers.CharField()
    resource = serializers.CharField()
    changes = serializers.JSONField()
    hash = serializers.CharField()
    previousHash = serializers.CharField()
    erased = serializers.BooleanField(required=False, help_text="present (true) once erasure zeroed the hash")
    deleted = serializers.BooleanField(
        required=False, help_text="present (true) while the actor is a disabled principal; not hashed"
    )


class AuditPageOut(serializers.Serializer):
    data = AuditEventOut(many=True)
    total = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)


class CaseVerifyOut(serializers.Serializer):
    isValid = serializers.BooleanField()
    lastVerifiedAt = serializers.DateTimeField()
    entriesChecked = serializers.IntegerField()
    redactedEntries = serializers.IntegerField()
    firstInvalidEntry = serializers.UUIDField(allow_null=True)
    errors = serializers.ListField(child=serializers.CharField())


class _EntryOut(serializers.Serializer):
    id = serializers.UUIDField()
    sequence = serializers.IntegerField()
    timestamp = serializers.DateTimeField()
    hash = serializers.CharField()


class CheckpointPageOut(serializers.Serializer):
    data = CheckpointOut(many=True)
    total = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)


class ChainVerifyOut(serializers.Serializer):
    status = serializers.CharField(help_text="valid or invalid")
    entries_checked = serializers.IntegerField()
    first_entry = _EntryOut(allow_null=True)
    last_entry = _EntryOut(allow_null=True)
    redacted_entries = serializers.IntegerField()
    first_invalid_entry = _EntryOut(allow_null=True)
    errors = serializers.ListField(child=serializers.CharField())
    checkpoints = CheckpointReportOut()
