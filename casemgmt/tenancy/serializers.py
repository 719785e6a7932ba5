"""Input fields that refuse type coercion (`"25"` is not an integer, `1` is not a boolean) and
serializers that refuse unknown keys, so a client's typo is a 400 rather than silently ignored."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from shared.api.fields import StrictCharField


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
