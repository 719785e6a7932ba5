"""OpenAPI shapes of the audit endpoints (documentation only: the views build plain dicts)."""

from rest_framework import serializers

from shared.audit.openapi import CheckpointOut, CheckpointReportOut


class AuditEventOut(serializers.Serializer):
    id = serializers.UUIDField()
    timestamp = serializers.DateTimeField()
    actor = serializers.CharField()
    action = serializers.CharField()
    resource = serializers.CharField()
    changes = serializers.DictField()
    hash = serializers.CharField()
    previousHash = serializers.CharField()  # noqa: N815 - the wire name


class AuditEventListOut(serializers.Serializer):
    events = AuditEventOut(many=True)
    total = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()


class AuditVerifyOut(serializers.Serializer):
    status = serializers.ChoiceField(choices=["valid", "invalid"])
    entries_checked = serializers.IntegerField()
    first_invalid = serializers.CharField(allow_null=True)
    errors = serializers.ListField(child=serializers.CharField())
    checkpoints = CheckpointReportOut()


class AuditCheckpointListOut(serializers.Serializer):
    checkpoints = CheckpointOut(many=True)
    total = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()
