"""What both OpenAPI documents add to drf-spectacular's output, so they describe what the services do.

- Every operation documents the error answers it can give, in the one error shape (`Error`), from rules
  over the operation (authenticated, has a path parameter, takes a body, writes) rather than per view.
- Every string the JSON parser refuses is excluded by the document: strings carry a pattern without
  NUL, and free-form JSON values are `JsonValue`, whose strings and keys exclude it too.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter

from shared.api.pagination import MAX_OFFSET

# The parser refuses NUL in every string of a body (PostgreSQL text and jsonb cannot hold it). Lone
# surrogates are refused too, but they are not Unicode text, so no JSON client can send them.
NO_NUL = "^[^\\x00]*$"
# The same for a string with no other pattern, written as `not` a match: generators draw any text and
# drop the rare one with NUL, where the anchored pattern made them build long strings from a regex.
HAS_NUL: dict[str, str] = {"pattern": "\\x00"}
# ...and a required text field also needs a character that is not whitespace (DRF trims first).
NOT_BLANK = "^[^\\x00]*[^\\x00\\s][^\\x00]*$"

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "The one error body of both services.",
    "required": ["error", "code", "message", "details"],
    "properties": {
        "error": {"type": "boolean", "enum": [True]},
        "code": {"type": "string", "description": "Machine-readable reason, e.g. validation_error."},
        "message": {"type": "string"},
        "details": {
            "type": "object",
            "description": "For input errors: the first problem (field, error) and all of them (errors).",
            "properties": {
                "field": {"type": "string", "nullable": True},
                "error": {"type": "string"},
                "errors": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["field", "error"],
                        "properties": {
                            "field": {"type": "string", "nullable": True},
                            "error": {"type": "string"},
                        },
                    },
                },
                "retryAfter": {"type": "integer", "description": "429: seconds to wait."},
            },
        },
    },
}

# Any JSON value whose strings (and object keys) contain no NUL.
JSON_NOT_NULL_SCHEMA: dict[str, Any] = {
    "description": "Any JSON value but null; no string in it (object keys included) may contain NUL (\\u0000).",
    "oneOf": [
        {"type": "string", "not": HAS_NUL},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "array", "items": {"$ref": "#/components/schemas/JsonValue"}},
        {
            "type": "object",
            "additionalProperties": {"$ref": "#/components/schemas/JsonValue"},
            "propertyNames": {"pattern": NO_NUL},
        },
    ],
}
JSON_VALUE_SCHEMA: dict[str, Any] = {
    "description": "Any JSON value; no string in it (object keys included) may contain NUL (\\u0000).",
    "nullable": True,
    "allOf": [{"$ref": "#/components/schemas/JsonNotNull"}],
}

ERROR_RESPONSES: dict[str, str] = {
    "400": "Invalid input: malformed JSON, a field that fails validation, or a value refused on meaning "
    "(validation_error, or a more specific code).",
    "401": "No credentials, or invalid, expired or revoked ones (not_authenticated, invalid_credentials).",
    "403": "Authenticated without the permission this operation needs (permission_denied).",
    "404": "No such resource, or one of another tenant (not_found).",
    "409": "Conflicts with the resource's current state (already_exists, version_conflict, invalid_state...).",
    "413": "The body is larger than the service accepts (payload_too_large).",
    "415": "The body is not in a media type this operation reads (unsupported_media_type).",
    "422": "An Idempotency-Key reused with a different request (idempotency_key_reused).",
    "429": "Too many requests; retry after the Retry-After header's seconds (rate_limited).",
    "503": "A backing service is down or a feature is not configured (service_unavailable, not_ready, "
    "not_configured); retry later.",
}


def errors_also(*codes: int) -> dict[str, list[int]]:
    """extend_schema `extensions` for error statuses beyond `error_codes`' rules (e.g. a public
    login's 401)."""
    return {"x-errors": list(codes)}


WRITE_METHODS = {"post", "put", "patch", "delete"}
METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def error_codes(method: str, operation: dict[str, Any]) -> list[str]:
    """The error statuses an operation can answer, from what every view of both services shares:
    validation and outages anywhere, authentication where the operation is secured, 404 on path
    parameters, conflicts on writes, body limits where there is a body."""
    codes = ["400", "429", "503"]
    parameters = operation.get("parameters", [])
    if operation.get("security") and {} not in operation["security"]:
        codes += ["401", "403"]
    if any(p.get("in") == "path" for p in parameters):
        codes.append("404")
    if method in WRITE_METHODS:
        codes.append("409")
    if "requestBody" in operation:
        codes += ["413", "415"]
    if any(p.get("in") == "header" and p.get("name") == "Idempotency-Key" for p in parameters):
        codes.append("422")
    return codes


def _response(code: str) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": ERROR_RESPONSES[code],
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }
    if code == "429":
        response["headers"] = {
            "Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer", "minimum": 1}}
        }
    return response


def _exclude_nul(schema: Any) -> None:
    """Walks a schema: strings get the NUL-free pattern, free-form values become `JsonValue`."""
    if isinstance(schema, list):
        for item in schema:
            _exclude_nul(item)
        return
    if not isinstance(schema, dict):
        return
    kind = schema.get("type")
    if kind == "string" and not {"pattern", "enum", "format", "not"} & set(schema):
        schema["not"] = dict(HAS_NUL)
    free_form = "properties" not in schema and schema.get("additionalProperties", True) in (True, {})
    if kind == "object" and free_form:
        schema["additionalProperties"] = {"$ref": "#/components/schemas/JsonValue"}
    if kind == "object" and schema.get("additionalProperties") is not False:
        # Not an OpenAPI 3.0 keyword, but JSON Schema's: tools that know it (schemathesis) use it.
        schema.setdefault("propertyNames", {"pattern": NO_NUL})
    for key, value in schema.items():
        if key not in ("example", "examples", "default", "enum", "propertyNames", "not"):
            _exclude_nul(value)


def postprocess(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular POSTPROCESSING_HOOKS entry shared by both services."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    for path_item in result.get("paths", {}).values():
        for method, operation in path_item.items():
            if method not in METHODS:
                continue
            _exclude_nul(operation.get("parameters", []))
            _exclude_nul(operation.get("requestBody", {}))
            responses = operation.setdefault("responses", {})
            # A view names errors the rules cannot see with extend_schema(extensions=errors_also(...)).
            extra = [str(code) for code in operation.pop("x-errors", [])]
            for code in error_codes(method, operation) + extra:
                responses.setdefault(code, {"$ref": f"#/components/responses/Error{code}"})
            operation["responses"] = dict(sorted(responses.items()))
    _exclude_nul(schemas)
    result["components"]["responses"] = {f"Error{code}": _response(code) for code in ERROR_RESPONSES}
    schemas["Error"] = ERROR_SCHEMA
    schemas["JsonValue"] = JSON_VALUE_SCHEMA
    schemas["JsonNotNull"] = JSON_NOT_NULL_SCHEMA
    return result


# Success responses that views share (used in their `extend_schema(responses=...)`).
EXPORT_RESPONSES: dict[Any, Any] = {
    (200, "application/json"): {"type": "array", "items": {"type": "object", "additionalProperties": True}},
    (200, "text/csv"): {"type": "string"},
}
# A stored file, in the media type it was uploaded with.
FILE_RESPONSE: dict[Any, Any] = {(200, "*/*"): {"type": "string", "format": "binary"}}

LIST_OF_OBJECTS: dict[Any, Any] = {
    200: {"type": "array", "items": {"type": "object", "additionalProperties": True}}
}


def page_parameters(*, default_limit: int = 25, max_limit: int = 100) -> list[OpenApiParameter]:
    """`limit` and `offset` as `shared.api.pagination.get_page` reads them (out of range: 400; an
    empty value, `?limit=`, is the default, as for every query parameter)."""
    return [
        query("limit", {"type": "integer", "minimum": 1, "maximum": max_limit}, f"default {default_limit}"),
        query("offset", {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET}, "default 0"),
    ]


# Query parameters of list routes, declared as the views read them (a value outside its schema is
# a 400; an empty value is the same as none). tests/support/openapi_params.py checks that every
# parameter a view reads is declared.
TIMESTAMP_OR_DATE: dict[str, Any] = {"type": "string", "anyOf": [{"format": "date-time"}, {"format": "date"}]}
UUID: dict[str, Any] = {"type": "string", "format": "uuid"}
TEXT: dict[str, Any] = {"type": "string"}  # a filter value: any text (one too long matches nothing)
BOOLEAN: dict[str, Any] = {"type": "boolean"}


def one_of(*values: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


def query(name: str, schema: dict[str, Any], description: str = "") -> OpenApiParameter:
    """An empty value (`?status=`) means the same as none, so the document allows it too."""
    either = {"anyOf": [schema, {"type": "string", "enum": [""]}]}
    return OpenApiParameter(name, either, OpenApiParameter.QUERY, description=description)
