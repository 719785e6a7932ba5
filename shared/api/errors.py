"""One error family for both services, rendered once by `shared.api.handler`.

Services raise these; views never build error dicts by hand. Every error body has this shape:
``{"error": true, "code", "message", "details": {"field", "error", "errors": [...]}}``.
"""

from __future__ import annotations

from typing import Any


class ApplicationError(Exception):
    status_code = 400
    code = "validation_error"
    default_message = "Invalid request."

    def __init__(
        self,
        message: str | None = None,
        *,
        field: str | None = None,
        errors: list[dict[str, str]] | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.message = message or self.default_message
        if code:
            self.code = code
        self.errors = errors or ([{"field": field, "error": self.message}] if field else [])
        self.headers = headers or {}
        self.extra = extra or {}
        super().__init__(self.message)

    def details(self) -> dict[str, Any]:
        details: dict[str, Any] = dict(self.extra)
        if self.errors:
            details.update(
                field=self.errors[0].get("field"), error=self.errors[0].get("error"), errors=self.errors
            )
        return details

    def body(self) -> dict[str, Any]:
        return {"error": True, "code": self.code, "message": self.message, "details": self.details()}


class ValidationFailed(ApplicationError):
    status_code = 400
    code = "validation_error"

    @classmethod
    def from_errors(cls, errors: list[dict[str, str]]) -> ValidationFailed:
        first = errors[0]
        field = first.get("field")
        message = f"{field}: {first['error']}" if field else first["error"]
        return cls(message, errors=errors)


class NotAuthenticated(ApplicationError):
    status_code = 401
    code = "not_authenticated"
    default_message = "Authentication credentials were not provided or are invalid."


class InvalidCredentials(ApplicationError):
    status_code = 401
    code = "invalid_credentials"
    default_message = "Invalid credentials."


class PermissionDenied(ApplicationError):
    status_code = 403
    code = "permission_denied"
    default_message = "You do not have permission to perform this action."


class NotFound(ApplicationError):
    status_code = 404
    code = "not_found"
    default_message = "Not found."


class MethodNotAllowed(ApplicationError):
    status_code = 405
    code = "method_not_allowed"
    default_message = "Method not allowed."


class Conflict(ApplicationError):
    """409; the code says which conflict (already_exists, version_conflict, invalid_state...)."""

    status_code = 409
    code = "already_exists"
    default_message = "Conflict."


class AlreadyExists(Conflict):
    code = "already_exists"
    default_message = "Resource already exists."


class VersionConflict(Conflict):
    code = "version_conflict"
    default_message = "The resource was changed by someone else; reload and retry."


class InvalidState(Conflict):
    code = "invalid_state"
    default_message = "The resource is not in a state that allows this operation."


class IdempotencyKeyReused(ApplicationError):
    status_code = 422
    code = "idempotency_key_reused"
    default_message = "This Idempotency-Key was already used with a different request."


class PayloadTooLarge(ApplicationError):
    status_code = 413
    code = "payload_too_large"
    default_message = "Payload too large."


class RequestTimeout(ApplicationError):
    status_code = 408
    code = "request_timeout"
    default_message = "The request body did not arrive in time."


class UnsupportedMediaType(ApplicationError):
    status_code = 415
    code = "unsupported_media_type"
    default_message = "Unsupported media type."


class RateLimited(ApplicationError):
    status_code = 429
    code = "rate_limited"
    default_message = "Too many requests; try again later."

    def __init__(self, message: str | None = None, *, retry_after: int, **kwargs: Any) -> None:
        headers = {"Retry-After": str(max(1, int(retry_after)))}
        super().__init__(message, headers=headers, extra={"retryAfter": max(1, int(retry_after))}, **kwargs)


class NotReady(ApplicationError):
    status_code = 503
    code = "not_ready"
    default_message = "Service not ready."


class ServiceUnavailable(ApplicationError):
    status_code = 503
    code = "service_unavailable"
    default_message = "A backing service is unavailable; try again later."


class NotConfigured(ApplicationError):
    status_code = 503
    code = "not_configured"
    default_message = "This feature is not configured."


class InternalError(ApplicationError):
    status_code = 500
    code = "internal_error"
    default_message = "Internal server error."
