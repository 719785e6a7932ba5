"""Response shapes for the OpenAPI document. Bodies are rendered by the functions in apis.py (hot
paths); these serializers only describe them, and tests/casemgmt/cases/test_openapi.py checks that
real responses carry exactly the documented fields."""

from __future__ import annotations

from rest_framework import serializers


class CaseTypeOut(serializers.Serializer):
    id = serializers.UUIDField()
    key = serializers.CharField()
    version = serializers.IntegerField()
    displayName = serializers.CharField()
    description = serializers.CharField()
    schema = serializers.JSONField()
    prefix = serializers.CharField()
    slaHours = serializers.IntegerField(allow_null=True)
    accessTeams = serializers.ListField(child=serializers.UUIDField())
    createdAt = serializers.DateTimeField()


class _CaseBase(serializers.Serializer):
    id = serializers.UUIDField()
    caseNumber = serializers.CharField()
    displayName = serializers.CharField()
    caseTypeId = serializers.UUIDField()
    caseTypeKey = serializers.CharField()
    workflowVersionId = serializers.UUIDField(allow_null=True)
    status = serializers.CharField(help_text="active, closed or cancelled")
    version = serializers.IntegerField()
    createdAt = serializers.DateTimeField()
    createdBy = serializers.UUIDField(allow_null=True)
    updatedAt = serializers.DateTimeField()
    slaDeadline = serializers.DateTimeField(allow_null=True)
    closedAt = serializers.DateTimeField(allow_null=True)
    outcome = serializers.CharField(allow_null=True)
    statusReason = serializers.CharField(allow_null=True)


class CaseOut(_CaseBase):
    data = serializers.JSONField()  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class


class _StepOut(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    type = serializers.CharField()
    status = serializers.CharField()
    activatedAt = serializers.DateTimeField(allow_null=True)
    completedAt = serializers.DateTimeField(required=False)
    iteration = serializers.IntegerField(help_text="1, then one more each time a rework route re-enters it")
    fireAt = serializers.DateTimeField(required=False, help_text="timer steps: when it fires")
    message = serializers.CharField(required=False, help_text="wait steps: the message it waits for")
    childCaseId = serializers.UUIDField(required=False, help_text="case steps: the child case")

    result = serializers.JSONField(required=False, help_text="The step's result, once it has one.")
    outcome = serializers.CharField(required=False, help_text="A completed task's outcome, if it had one.")
    completedBy = serializers.UUIDField(required=False, help_text="Who completed the task.")
    error = serializers.CharField(required=False, help_text="Why the step failed.")


class _StepRunOut(serializers.Serializer):
    stepId = serializers.CharField()
    type = serializers.CharField()
    iteration = serializers.IntegerField()
    status = serializers.CharField()
    result = serializers.JSONField(allow_null=True)
    outcome = serializers.CharField(allow_null=True)
    completedBy = serializers.UUIDField(allow_null=True)
    activatedAt = serializers.DateTimeField(allow_null=True)
    completedAt = serializers.DateTimeField(allow_null=True)


class _WorkflowOut(serializers.Serializer):
    id = serializers.UUIDField()
    version = serializers.IntegerField()
    steps = _StepOut(many=True)
    stepResults = serializers.DictField(
        child=serializers.JSONField(),
        help_text="The results of the completed steps by step id (what templates and conditions read).",
    )
    history = _StepRunOut(many=True, help_text="earlier runs of steps a rework route re-entered")


class _ChildOut(serializers.Serializer):
    id = serializers.UUIDField()
    caseNumber = serializers.CharField()
    status = serializers.CharField()


class CaseDetailOut(CaseOut):
    parentId = serializers.UUIDField(allow_null=True, help_text="the case whose case step created it")
    children = _ChildOut(many=True, help_text="cases its case steps created")
    workflow = _WorkflowOut(allow_null=True)


class CaseListItemOut(_CaseBase):
    summary = serializers.JSONField()
    currentStep = serializers.CharField(allow_null=True)


class CasePageOut(serializers.Serializer):
    data = CaseListItemOut(many=True)  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class
    total = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)


class SearchHitOut(serializers.Serializer):
    id = serializers.UUIDField()
    caseNumber = serializers.CharField()
    displayName = serializers.CharField()
    caseTypeId = serializers.UUIDField()
    relevance = serializers.FloatField()
    excerpt = serializers.CharField()


class SearchPageOut(serializers.Serializer):
    data = SearchHitOut(many=True)  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class
    total = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)


class _WeekOut(serializers.Serializer):
    week = serializers.IntegerField()
    count = serializers.IntegerField()


class DashboardOut(serializers.Serializer):
    totalActive = serializers.IntegerField()
    totalClosed = serializers.IntegerField()
    avgResolutionTime = serializers.FloatField()
    slaComplianceRate = serializers.FloatField()
    byStatus = serializers.DictField(child=serializers.IntegerField())
    byType = serializers.DictField(child=serializers.IntegerField())
    ageingByWeek = _WeekOut(many=True)
