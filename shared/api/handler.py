"""Maps every exception a view can raise to the one error body (shape in `shared.api.errors`)."""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DataError, InterfaceError
from django.db import OperationalError as DatabaseUnavailable
from django.http import Http404, JsonResponse
from kombu.exceptions import OperationalError as BrokerUnavailable
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rest_framework import exceptions as drf
from rest_framework.response import Response

from shared.api import errors

logger = logging.getLogger("shared.api")


def _flatten(detail: Any, prefix: str = "") -> list[dict[str, str]]:
    """Turns DRF's nested error detail into a flat list of {field, error}."""
    if isinstance(detail, dict):
        out: list[dict[str, str]] = []
        for key, value in detail.items():
            name = (
                prefix
                if key in ("non_field_errors", "__all__")
                else (f"{prefix}.{key}" if prefix else str(key))
            )
            out.extend(_flatten(value, name))
        return out
    if isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            return [{"field": prefix, "error": str(item)} for item in detail]
        out = []
        for index, item in enumerate(detail):
            if item:
                out.extend(_flatten(item, f"{prefix}[{index}]"))
        return out
    return [{"field": prefix, "error": str(detail)}]


def field_errors(detail: Any) -> list[dict[str, str]]:
    """A serializer's errors as the error body lists them: `{field, error}`, nested keys joined."""
    return _flatten(detail)


def to_application_error(exc: Exception) -> errors.ApplicationError | None:
    if isinstance(exc, errors.ApplicationError):
        return exc
    if isinstance(exc, drf.ParseError):
        return errors.ValidationFailed(f"Malformed request body: {exc.detail}")
    if isinstance(exc, drf.ValidationError):
        flat = [e for e in _flatten(exc.detail) if e["error"]] or [{"field": "", "error": "Invalid input."}]
        for item in flat:
            item["field"] = item["field"] or None  # type: ignore[assignment]
        return errors.ValidationFailed.from_errors(flat)
    if isinstance(exc, DjangoValidationError):
        return errors.ValidationFailed.from_errors([{"field": None, "error": m} for m in exc.messages])  # type: ignore[dict-item]
    if isinstance(exc, (drf.NotAuthenticated, drf.AuthenticationFailed)):
        return errors.NotAuthenticated(str(exc.detail))
    if isinstance(exc, (drf.PermissionDenied, DjangoPermissionDenied)):
        return errors.PermissionDenied()
    if isinstance(exc, (drf.NotFound, Http404)):
        return errors.NotFound()
    if isinstance(exc, drf.MethodNotAllowed):
        return errors.MethodNotAllowed(str(exc.detail))
    if isinstance(exc, drf.UnsupportedMediaType):
        return errors.UnsupportedMediaType(str(exc.detail))
    if isinstance(exc, DataError):
        # The database refused a value (too long for its column, number out of range): bad input
        # that validation did not catch, so a 400, not a 500.
        logger.warning("database refused a value: %s", exc)
        return errors.ValidationFailed("A value is too long or out of range for its field.")
    if isinstance(exc, RequestDataTooBig):
        return errors.PayloadTooLarge()
    if isinstance(exc, (DatabaseUnavailable, InterfaceError)):
        # The database refused the connection, dropped it, is starting up, or gave up on a lock or
        # a statement timeout: the transaction rolled back (or its commit never answered, so it was
        # not acknowledged) and the client may retry later. A bug in SQL is a ProgrammingError: 500.
        logger.warning("database unavailable: %s", exc)
        return errors.ServiceUnavailable()
    if isinstance(exc, (RedisConnectionError, RedisTimeoutError, BrokerUnavailable)):
        # Redis (cache, channel layer, broker) is down: the client may retry later. Work queued
        # after a commit does not raise (it logs, and the sweeps send it again), so what reaches
        # here failed inside or before the request's transaction, which it rolled back.
        logger.warning("backing service unavailable: %s", exc)
        return errors.ServiceUnavailable()
    if isinstance(exc, drf.Throttled):
        return errors.RateLimited(retry_after=int(exc.wait or 1))
    if isinstance(exc, drf.NotAcceptable):
        return errors.ApplicationError(str(exc.detail), code="not_acceptable")
    if isinstance(exc, drf.APIException):
        err = errors.ApplicationError(str(exc.detail))
        err.status_code = exc.status_code
        return err
    return None


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """DRF EXCEPTION_HANDLER: every error leaves in the one error shape; a 500 never leaks a traceback."""
    app_error = to_application_error(exc)
    if app_error is None:
        request = context.get("request")
        request_id = getattr(request, "request_id", None) if request is not None else None
        logger.exception("Unhandled error (request_id=%s)", request_id)
        app_error = errors.InternalError()
    response = Response(app_error.body(), status=app_error.status_code)
    for name, value in app_error.headers.items():
        response[name] = value
    return response


def error_response(app_error: errors.ApplicationError) -> JsonResponse:
    """The same body for plain Django views (404/500 handlers, middleware)."""
    response = JsonResponse(app_error.body(), status=app_error.status_code)
    for name, value in app_error.headers.items():
        response[name] = value
    return response
