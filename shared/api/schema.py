"""OpenAPI generation for views written in the `InputSerializer`/`OutputSerializer` style."""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import Direction


class AutoSchema(SpectacularAutoSchema):
    """Documents a view's nested InputSerializer as the body and OutputSerializer as the response;
    views without them are documented as free-form JSON rather than skipped."""

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
        cls = serializer if isinstance(serializer, type) else type(serializer)
        if "." in cls.__qualname__ and "<locals>" not in cls.__qualname__:
            return cls.__qualname__.replace("Api.", "").replace(".", "")
        return super().get_serializer_name(serializer, direction)
