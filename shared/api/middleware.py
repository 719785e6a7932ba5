"""Request id and last-resort error mapping for both services."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse

from shared.api import errors
from shared.api.handler import error_response, to_application_error

logger = logging.getLogger("shared.api")
_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


def _has_nul_in_url(request: HttpRequest) -> bool:
    """PostgreSQL text cannot hold NUL, so a `%00` in a path or query would fail at the database."""
    if "\x00" in request.path:
        return True
    query = request.META.get("QUERY_STRING", "")
    if "%00" not in query and "\x00" not in query:  # decoding makes a NUL of nothing else
        return False
    return any("\x00" in key or "\x00" in value for key, values in request.GET.lists() for value in values)


class SyncAndAsyncMiddleware:
    """Base of a middleware that runs in the server's own mode: sync under WSGI, async under ASGI.

    A sync-only middleware in an ASGI stack makes Django hop threads around it on every request
    (async -> sync -> async), which costs CPU and ties request threads to the event loop. Subclasses
    do only quick, non-blocking work around `get_response` in `before` and `after`.
    """

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if iscoroutinefunction(self):
            return self._acall(request)
        response = self.before(request) or self.get_response(request)
        return self.after(request, response)

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        get_response: Callable[[HttpRequest], Awaitable[HttpResponse]] = self.get_response
        response = self.before(request) or await get_response(request)
        return self.after(request, response)

    def before(self, request: HttpRequest) -> HttpResponse | None:
        return None

    def after(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        return response


class RequestIDMiddleware(SyncAndAsyncMiddleware):
    """Echoes a sane `X-Request-ID` or generates one; logs carry it, responses return it."""

    def before(self, request: HttpRequest) -> HttpResponse | None:
        incoming = request.META.get("HTTP_X_REQUEST_ID", "")  # request.headers would copy every header
        request.request_id = incoming if _SAFE_ID.match(incoming) else uuid.uuid4().hex  # type: ignore[attr-defined]
        if _has_nul_in_url(request):
            return error_response(errors.ValidationFailed("The URL must not contain the NUL character."))
        return None

    def after(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        response["X-Request-ID"] = request.request_id  # type: ignore[attr-defined]
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        # Exceptions escaping non-DRF views: keep the one error body shape and never leak a traceback.
        if isinstance(exception, RequestDataTooBig):
            return error_response(errors.PayloadTooLarge())
        # Http404 / PermissionDenied raised by non-DRF views (e.g. Django admin) are 404 / 403, not 500.
        app_error = to_application_error(exception)
        if app_error is not None:
            return error_response(app_error)
        logger.exception("Unhandled error (request_id=%s)", getattr(request, "request_id", None))
        return error_response(errors.InternalError())


class ChunkedBodyMiddleware(SyncAndAsyncMiddleware):
    """Gives a body that came without Content-Length (chunked transfer encoding) its length.

    The ASGI server has already gathered the whole body into the request's file, but Django's limit
    on body size and DRF's parsers look only at CONTENT_LENGTH: without one, DRF reads the body as
    empty (a valid request would be told its fields are missing) and the size limit never applies.
    """

    def before(self, request: HttpRequest) -> HttpResponse | None:
        if not request.META.get("CONTENT_LENGTH"):
            size = _buffered_body_size(request)
            if size:
                request.META["CONTENT_LENGTH"] = str(size)
        return None


def _buffered_body_size(request: HttpRequest) -> int:
    # Under ASGI the request reads from a seekable file holding the entire body; under WSGI the
    # stream is the socket, whose length without Content-Length is unknown, so nothing changes there.
    stream = getattr(request, "_stream", None)
    if stream is None or getattr(request, "_read_started", True):
        return 0
    if not hasattr(stream, "seekable") or not stream.seekable():
        return 0
    start = stream.tell()
    size = stream.seek(0, 2) - start
    stream.seek(start)
    return size


class RequestIDLogFilter(logging.Filter):
    """Lets log formats print %(request_id)s without every caller passing it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = "-"
        return True
