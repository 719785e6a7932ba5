"""Serializer fields shared by both services' input serializers."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers


class StrictCharField(serializers.CharField):
    """A string and nothing else: `3` or `true` is a 400, not silently turned into text."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            raise serializers.ValidationError("Must be a string.")
        return super().to_internal_value(data)


class StrictFloatField(serializers.FloatField):
    """A JSON number and nothing else: `"0.5"` or `false` is a 400, not silently converted."""

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise serializers.ValidationError("Must be a number.")
        return super().to_internal_value(data)


@extend_schema_field({"type": "object", "additionalProperties": {"$ref": "#/components/schemas/JsonValue"}})
class JsonObjectField(serializers.JSONField):
    """A JSON object (the view or service refuses other values with a 400); documented as one."""
