"""Response shapes for the OpenAPI document (the views render plain dicts of this shape)."""

from __future__ import annotations

from rest_framework import serializers


class DraftOutput(serializers.Serializer):
    data = serializers.DictField()
    savedAt = serializers.DateTimeField()


class TaskOutput(serializers.Serializer):
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
    formSchema = serializers.DictField()
    outcomes = serializers.ListField(child=serializers.CharField(), allow_null=True)
    escalated = serializers.BooleanField()
    escalatedAt = serializers.DateTimeField(allow_null=True)
    escalationReason = serializers.CharField(allow_null=True)
    escalatedTo = serializers.UUIDField(allow_null=True)
    draft = DraftOutput(allow_null=True)
    outcome = serializers.CharField(allow_null=True)
    completedAt = serializers.DateTimeField(allow_null=True)
    completedBy = serializers.UUIDField(allow_null=True)


class FullTaskOutput(TaskOutput):
    caseData = serializers.DictField()
    data = serializers.DictField(allow_null=True)


class InboxOutput(serializers.Serializer):
    data = TaskOutput(many=True)
    total = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)


class WorkflowOutput(serializers.Serializer):
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


class WorkflowListOutput(serializers.Serializer):
    data = WorkflowOutput(many=True)
    total = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
