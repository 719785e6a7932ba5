"""Documentation-only serializers: the response shapes in the OpenAPI document. The views render
plain dicts of these shapes with the `*_out` functions next to them."""

from __future__ import annotations

from rest_framework import serializers


class DraftOut(serializers.Serializer):
    data = serializers.DictField()  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class
    savedAt = serializers.DateTimeField()


class TeamRefOut(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()


class TaskOut(serializers.Serializer):
    caseId = serializers.UUIDField()
    stepId = serializers.CharField()
    stepName = serializers.CharField()
    caseType = serializers.CharField()
    caseNumber = serializers.CharField()
    caseSummary = serializers.DictField()
    status = serializers.ChoiceField(choices=["claimed", "unclaimed", "completed"])
    createdAt = serializers.DateTimeField()
    dueAt = serializers.DateTimeField(allow_null=True)
    assignedTo = serializers.UUIDField(allow_null=True)
    role = serializers.CharField(allow_null=True)
    candidateTeam = TeamRefOut(allow_null=True)
    formSchema = serializers.DictField()
    outcomes = serializers.ListField(child=serializers.CharField(), allow_null=True)
    escalated = serializers.BooleanField()
    escalatedAt = serializers.DateTimeField(allow_null=True)
    escalationReason = serializers.CharField(allow_null=True)
    escalatedTo = serializers.UUIDField(allow_null=True)
    draft = DraftOut(allow_null=True)
    outcome = serializers.CharField(allow_null=True)
    completedAt = serializers.DateTimeField(allow_null=True)
    completedBy = serializers.UUIDField(allow_null=True)


class FullTaskOut(TaskOut):
    caseData = serializers.DictField()
    data = serializers.DictField(allow_null=True)  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class


class InboxPageOut(serializers.Serializer):
    data = TaskOut(many=True)  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class
    total = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)


class WorkflowOut(serializers.Serializer):
    id = serializers.UUIDField()
    caseTypeKey = serializers.CharField()
    name = serializers.CharField()
    version = serializers.IntegerField()
    status = serializers.ChoiceField(choices=["draft", "published", "withdrawn"])
    isDefault = serializers.BooleanField()
    autoClose = serializers.BooleanField()
    slaHours = serializers.IntegerField(allow_null=True)
    outcomes = serializers.ListField(child=serializers.CharField(), allow_null=True)
    steps = serializers.ListField(child=serializers.DictField())
    createdAt = serializers.DateTimeField()
    updatedAt = serializers.DateTimeField()
    publishedAt = serializers.DateTimeField(allow_null=True)


class WorkflowPageOut(serializers.Serializer):
    data = WorkflowOut(many=True)  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class
    total = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)


class MessageOut(serializers.Serializer):
    caseId = serializers.UUIDField()
    stepId = serializers.CharField(help_text="the wait step the message completed")
    message = serializers.CharField()
    status = serializers.CharField()
    result = serializers.JSONField(allow_null=True)
    completedAt = serializers.DateTimeField(allow_null=True)


class _MigrationFailureOut(serializers.Serializer):
    caseId = serializers.UUIDField()
    code = serializers.CharField()
    message = serializers.CharField()


class MigrationOut(serializers.Serializer):
    migrated = serializers.IntegerField()
    failed = _MigrationFailureOut(many=True)
