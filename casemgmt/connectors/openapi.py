"""Documentation-only serializers: the response shapes in the OpenAPI document."""

from __future__ import annotations

from rest_framework import serializers


class InputOut(serializers.Serializer):
    type = serializers.CharField()
    enum = serializers.ListField(child=serializers.CharField(), required=False)
    required = serializers.BooleanField(required=False)  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class


class ActionOut(serializers.Serializer):
    name = serializers.CharField()
    displayName = serializers.CharField()
    inputs = serializers.DictField(child=InputOut(), required=False)


class ConnectorOut(serializers.Serializer):
    key = serializers.CharField()
    displayName = serializers.CharField()
    description = serializers.CharField()
    requiresAuth = serializers.BooleanField()
    configured = serializers.BooleanField()
    actions = ActionOut(many=True)


class ConnectorConfigOut(serializers.Serializer):
    key = serializers.CharField()
    config = serializers.DictField(help_text='secret values shown as "***"')
    updatedAt = serializers.DateTimeField(allow_null=True)


class TestErrorOut(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()


class TestOut(serializers.Serializer):
    success = serializers.BooleanField()
    result = serializers.DictField(
        allow_null=True, help_text="{statusCode, body}, or {resolved} on a dry run"
    )
    error = TestErrorOut(allow_null=True)


class InvocationOut(serializers.Serializer):
    id = serializers.IntegerField()
    connector = serializers.CharField()
    action = serializers.CharField()
    source = serializers.ChoiceField(choices=["step", "test", "replay"])  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class
    deliveryId = serializers.UUIDField(allow_null=True)
    caseId = serializers.UUIDField(allow_null=True)
    stepId = serializers.CharField(allow_null=True)
    attempt = serializers.IntegerField()
    url = serializers.CharField()
    method = serializers.CharField()
    requestHeaders = serializers.DictField(child=serializers.CharField())
    statusCode = serializers.IntegerField(allow_null=True)
    responseExcerpt = serializers.CharField()
    latencyMs = serializers.IntegerField()
    success = serializers.BooleanField()
    error = TestErrorOut(allow_null=True)
    createdAt = serializers.DateTimeField()


class InvocationPageOut(serializers.Serializer):
    data = InvocationOut(many=True)  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class
    total = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()


class DeliveryOut(serializers.Serializer):
    id = serializers.UUIDField()
    connector = serializers.CharField()
    action = serializers.CharField()
    caseId = serializers.UUIDField(allow_null=True)
    stepId = serializers.CharField(allow_null=True)
    status = serializers.ChoiceField(choices=["pending", "sending", "delivered", "dead"])
    attempts = serializers.IntegerField()
    maxAttempts = serializers.IntegerField()
    nextAttemptAt = serializers.DateTimeField(allow_null=True)
    lastStatus = serializers.IntegerField(allow_null=True)
    lastError = serializers.CharField(allow_null=True)
    replays = serializers.IntegerField()
    createdAt = serializers.DateTimeField()
    deliveredAt = serializers.DateTimeField(allow_null=True)


class DeliveryPageOut(serializers.Serializer):
    data = DeliveryOut(many=True)  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class
    total = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()
