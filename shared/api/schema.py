"""OpenAPI generation for views written in the `InputSerializer`/`OutputSerializer` style."""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings
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

# Operation ids are camelCase verb + resource, from the view's class name (`CaseListCreateApi`:
# GET `listCases`, POST `createCase`), so people and generated clients read what an operation does.
METHOD_VERBS = {"GET": "get", "PUT": "update", "PATCH": "update", "POST": "create", "DELETE": "delete"}
# Last in a view's name, these say what it does to the rest of the name: `CaseCancelApi` -> `cancelCase`.
ACTION_VERBS = frozenset(
    "Ask Cancel Change Claim Close Complete Create Delete Disable Download Draft Enable Escalate Export "
    "Login Logout Pause Publish Purge Reassign Receive Replay Rerun Resume Run Search Set Test Update "
    "Upload Verify Withdraw".split()
)
# ...and these act on all of them: `CaseSearchApi` -> `searchCases`.
COLLECTION_VERBS = frozenset({"Export", "Search", "Verify"})
# First in the name of a view that has no other verb: `ScheduleTaskApi` -> `scheduleTask`.
LEADING_VERBS = frozenset({"Schedule"})
UNCOUNTABLE = frozenset({"Audit", "Data", "Metrics", "Settings", "Status"})
WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|$)|[A-Z]?[a-z]+|\d+")


def _plural(word: str) -> str:
    if word in UNCOUNTABLE or word.endswith("s"):
        return word
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def operation_name(view_name: str, method: str) -> str:
    """The operation id a view's method gets from its class name (see METHOD_VERBS)."""
    words = WORD.findall(view_name.removesuffix("Api"))
    collection = words[-1] == "List" or words[-2:] == ["List", "Create"]
    if collection or words[-1] == "Detail":
        noun = words[: -2 if words[-2:] == ["List", "Create"] else -1]
        verb = "list" if collection and method == "GET" else METHOD_VERBS[method]
        plural = verb == "list"
    elif words[-1] in ACTION_VERBS:
        noun, verb, plural = words[:-1], words[-1].lower(), words[-1] in COLLECTION_VERBS
    elif words[0] in LEADING_VERBS and len(words) > 1 and method == "POST":
        noun, verb, plural = words[1:], words[0].lower(), False
    else:
        noun, verb, plural = words, METHOD_VERBS[method], False
    if plural and noun:
        noun = [*noun[:-1], _plural(noun[-1])]
    return verb + "".join(noun)


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


class AutoSchema(SpectacularAutoSchema):
    """Documents a view's nested InputSerializer as the body and OutputSerializer as the response;
    views without them are documented as free-form JSON rather than skipped.

    Serializers say what their fields cannot: `refuses_unknown_fields = True` documents
    `additionalProperties: false` on the body, and `openapi_extra` (a dict) is merged into their
    schema (e.g. a `oneOf` over which fields must be given)."""

    def get_operation(self, *args: Any, **kwargs: Any) -> Any:
        operation = super().get_operation(*args, **kwargs)
        if operation is not None and "_" in operation["operationId"]:
            # An id given to extend_schema in drf-spectacular's snake_case style (`cases_list`) gives
            # way to the rule; a camelCase one is the view naming itself on purpose and stays.
            operation["operationId"] = self._named_operation_id()
        tag = self._path_tag()
        if operation is not None and tag:
            operation["tags"] = [tag]  # over a view's own: the resources are named in one place
        return operation

    def get_operation_id(self) -> str:
        return self._named_operation_id()

    def _named_operation_id(self) -> str:
        """`API_DOCS_OPERATION_IDS` names the views the rule names badly (`VaultUploadApi`), by class
        name or `ClassName.METHOD`; every other operation id comes from `operation_name`."""
        view_name = type(self.view).__name__
        irregular = getattr(settings, "API_DOCS_OPERATION_IDS", {})
        named = irregular.get(f"{view_name}.{self.method}") or irregular.get(view_name)
        return named or operation_name(view_name, self.method)

    def get_tags(self) -> list[str]:
        tag = self._path_tag()
        return [tag] if tag else super().get_tags()

    def _path_tag(self) -> str | None:
        """The resource an operation belongs to, from `API_DOCS_TAG_PATHS` ((path prefix, tag) pairs;
        the longest prefix the path is under wins); None: drf-spectacular's first path segment."""
        pairs = getattr(settings, "API_DOCS_TAG_PATHS", ())
        matches = [(prefix, tag) for prefix, tag in pairs if _under(self.path, prefix)]
        return max(matches, key=lambda pair: len(pair[0]))[1] if matches else None

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
