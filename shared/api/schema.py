"""OpenAPI generation for views written in the `InputSerializer`/`OutputSerializer` style."""

from __future__ import annotations

from typing import Any

from drf_spectacular.drainage import has_override
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import Direction
from rest_framework import serializers

from shared.api.openapi import HAS_NUL, NOT_BLANK

# Text fields whose format or pattern already says which strings they take.
FORMATTED = (
    serializers.EmailField,
    serializers.RegexField,
    serializers.SlugField,
    serializers.URLField,
    serializers.UUIDField,
    serializers.IPAddressField,
)
JSON_VALUE = {"$ref": "#/components/schemas/JsonValue"}
JSON_NOT_NULL = {"$ref": "#/components/schemas/JsonNotNull"}


class AutoSchema(SpectacularAutoSchema):
    """Documents a view's nested InputSerializer as the body and OutputSerializer as the response;
    views without them are documented as free-form JSON rather than skipped.

    Serializers say what their fields cannot: `refuses_unknown_fields = True` documents
    `additionalProperties: false` on the body, and `openapi_extra` (a dict) is merged into their
    schema (e.g. a `oneOf` over which fields must be given)."""

    def get_request_serializer(self) -> Any:
        serializer = getattr(self.view, "InputSerializer", None)
        if serializer is not None and self.method in ("POST", "PUT", "PATCH"):
            return serializer
        return None

    def get_response_serializers(self) -> Any:
        serializer = getattr(self.view, "OutputSerializer", None)
        return serializer if serializer is not None else OpenApiTypes.OBJECT

    def _get_serializer(self) -> Any:
        return getattr(self.view, "InputSerializer", None) or getattr(self.view, "OutputSerializer", None)

    def get_filter_backends(self) -> list:
        return []

    def get_serializer_name(self, serializer: Any, direction: Direction) -> str:
        # Every view's nested `InputSerializer` would otherwise become one shared "Input" component;
        # name nested serializers after their view instead (LoginApi.InputSerializer -> LoginInput).
        # A serializer that names its component (`extend_schema_serializer(component_name=...)`) keeps it.
        cls = serializer if isinstance(serializer, type) else type(serializer)
        if has_override(cls, "component_name"):
            return super().get_serializer_name(serializer, direction)
        if "." in cls.__qualname__ and "<locals>" not in cls.__qualname__:
            return cls.__qualname__.replace("Api.", "").replace(".", "")
        return super().get_serializer_name(serializer, direction)

    def _map_basic_serializer(self, serializer: Any, direction: Direction) -> dict[str, Any]:
        schema = super()._map_basic_serializer(serializer, direction)
        if direction == "request" and getattr(serializer, "refuses_unknown_fields", False):
            schema["additionalProperties"] = False
        schema.update(getattr(serializer, "openapi_extra", None) or {})
        return schema

    def _map_serializer_field(self, field: Any, direction: Direction, bypass_extensions: bool = False) -> Any:
        if isinstance(field, serializers.JSONField) and not has_override(field, "field"):
            # Any JSON value, null only where the field allows it (DRF's JSONField refuses null).
            return dict(JSON_VALUE if field.allow_null else JSON_NOT_NULL)
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if isinstance(field, (serializers.ListField, serializers.ListSerializer)) and not field.allow_empty:
            schema.setdefault("minItems", 1)
        text = isinstance(field, serializers.CharField) and not isinstance(field, FORMATTED)
        if direction == "request" and text and "pattern" not in schema:
            # DRF trims before checking blank, so "  " is as refused as "" (and NUL always is).
            if field.trim_whitespace and not field.allow_blank:
                schema["pattern"] = NOT_BLANK
            else:
                schema["not"] = dict(HAS_NUL)
        return schema
