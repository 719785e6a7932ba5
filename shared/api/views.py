"""Django-level handlers so that errors outside DRF views keep the one error body shape."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse

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


def allow_methods(*methods: str) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """For plain Django views (probes, metrics): another method is a 405 in the error body with an
    `Allow` header, as DRF views answer, rather than the view running for any method."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def only(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if request.method not in methods:
                response = error_response(errors.MethodNotAllowed(f"{request.method} is not allowed here."))
                response["Allow"] = ", ".join(methods)
                return response
            return view(request, *args, **kwargs)

        return only

    return decorate
