"""Documentation-only serializers: the response shapes in the OpenAPI document. The views render
plain dicts of these shapes with the `*_out` functions in apis.py."""

from __future__ import annotations

from rest_framework import serializers


class ReportDashboardOut(serializers.Serializer):
    totalActive = serializers.IntegerField()
    totalClosed = serializers.IntegerField()
    avgResolutionTime = serializers.FloatField(help_text="seconds, over closed cases")
    slaComplianceRate = serializers.FloatField(help_text="0 to 1")
    byStatus = serializers.DictField(child=serializers.IntegerField())
    byType = serializers.DictField(child=serializers.IntegerField())


class ReportSummaryOut(serializers.Serializer):
    period = serializers.CharField(help_text="ISO 8601 interval start/end of the cases' createdAt")
    totalCases = serializers.IntegerField()
    byStatus = serializers.DictField(child=serializers.IntegerField())
    avgResolutionTime = serializers.FloatField(help_text="seconds, over closed cases")
    slaComplianceRate = serializers.FloatField(help_text="0 to 1")


class SlaComplianceOut(serializers.Serializer):
    period = serializers.CharField(help_text="ISO 8601 interval start/end of the cases' createdAt")
    onTimeCount = serializers.IntegerField()
    breachedCount = serializers.IntegerField()
    complianceRate = serializers.FloatField(help_text="0 to 1")
    avgBreachTime = serializers.FloatField(help_text="seconds past the deadline, over breached cases")


class ReportOut(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    query = serializers.CharField()
    createdBy = serializers.UUIDField(allow_null=True)
    createdAt = serializers.DateTimeField()
    updatedAt = serializers.DateTimeField()


class ReportRunOut(serializers.Serializer):
    reportId = serializers.UUIDField()
    executedAt = serializers.DateTimeField()
    rowCount = serializers.IntegerField()
    truncated = serializers.BooleanField(help_text="true when the rows were cut at the row cap")
    data = serializers.ListField(child=serializers.DictField())  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class


class AnswerOut(serializers.Serializer):
    question = serializers.CharField()
    query = serializers.CharField(help_text="the generated query, as it ran")
    result = serializers.ListField(child=serializers.DictField())
    truncated = serializers.BooleanField(help_text="true when the rows were cut at the row cap")
