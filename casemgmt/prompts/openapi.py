"""Documentation-only serializers: the response shapes in the OpenAPI document. The views render
plain dicts of these shapes with `template_out`."""

from __future__ import annotations

from rest_framework import serializers


class TemplateOut(serializers.Serializer):
    """Documentation of the response shape; `template` is absent from list items."""

    name = serializers.CharField()
    description = serializers.CharField()
    template = serializers.CharField(required=False)
    model = serializers.CharField()
    temperature = serializers.FloatField(allow_null=True)
    maxTokens = serializers.IntegerField(allow_null=True)
    version = serializers.IntegerField()
    latestVersion = serializers.IntegerField()
    createdAt = serializers.DateTimeField()
    updatedAt = serializers.DateTimeField()
