"""Django-level handlers so that errors outside DRF views keep the one error body shape."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from shared.api import errors
from shared.api.handler import error_response


def handler404(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return error_response(errors.NotFound(f"No route matches {request.path}."))


def handler500(request: HttpRequest) -> JsonResponse:
    return error_response(errors.InternalError())


def handler400(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return error_response(errors.ValidationFailed("Bad request."))


def handler403(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return error_response(errors.PermissionDenied())
