"""Serializer fields shared by both services' input serializers. They refuse type coercion (`"25"`
is not an integer, `1` is not a boolean, `3` is not a string), and `StrictSerializer` refuses
unknown keys, so a client's typo is a 400 rather than silently ignored."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.fields import empty


class StrictCharField(serializers.CharField):
    """A string and nothing else: `3` or `true` is a 400, not silently turned into text."""

    def run_validation(self, data: Any = empty) -> Any:
        # The length cap is the documents' maxLength, which counts the text as sent: DRF checks it
        # after trimming, so "   " + a capped name would otherwise pass.
        if isinstance(data, str) and self.max_length is not None and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return super().run_validation(data)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            raise serializers.ValidationError("Must be a string.")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise serializers.ValidationError("Must be an integer.")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            raise serializers.ValidationError("Must be true or false.")
        return data


class StrictFloatField(serializers.FloatField):
    """A JSON number and nothing else: `"0.5"` or `false` is a 400, not silently converted."""

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise serializers.ValidationError("Must be a number.")
        return super().to_internal_value(data)


@extend_schema_field({"type": "object", "additionalProperties": {"$ref": "#/components/schemas/JsonValue"}})
class JsonObjectField(serializers.JSONField):
    """A JSON object (the view or service refuses other values with a 400); documented as one."""


class StrictSerializer(serializers.Serializer):
    refuses_unknown_fields = True  # documented as additionalProperties: false (shared.api.schema)

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise serializers.ValidationError({"non_field_errors": ["Body must be a JSON object."]})
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError({key: ["Unknown field."] for key in unknown})
        return super().to_internal_value(data)


def string_list(**kwargs: Any) -> serializers.ListField:
    return serializers.ListField(child=StrictCharField(max_length=100), **kwargs)
