"""Content-Security-Policy on every HTML page of both services, and the browser-only middleware."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.module_loading import import_string

from shared.api.middleware import SyncAndAsyncMiddleware
from shared.web.clientip import resolve_into

# Everything a page loads comes from the service itself, so a page keeps working offline or behind a
# locked-down network and an injected tag cannot pull code from elsewhere. The exceptions are what
# the pages need: Redoc and the admin set inline styles, Redoc runs its search index in a blob:
# worker and draws icons from data: URLs.
DEFAULT_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "worker-src 'self' blob:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


class ContentSecurityPolicyMiddleware(SyncAndAsyncMiddleware):
    """Adds the policy to HTML responses that have none of their own (JSON needs none)."""

    def after(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if (
            response.get("Content-Type", "").startswith("text/html")
            and "Content-Security-Policy" not in response
        ):
            response["Content-Security-Policy"] = getattr(settings, "CONTENT_SECURITY_POLICY", DEFAULT_POLICY)
        return response


class BrowserOnlyMiddleware:
    """Runs `settings.BROWSER_MIDDLEWARE` (sessions, CSRF, session login, messages) only for paths
    under `settings.BROWSER_PATH_PREFIXES` (the admin site, a console).

    The JSON API authenticates every call with a bearer token and never reads a session or a CSRF
    cookie, so on API paths those middlewares would only cost time (a session lookup, cookie parsing)
    per request. Browser paths get exactly the stack they would have had in `MIDDLEWARE`, in order,
    CSRF view check included.
    """

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.prefixes = tuple(getattr(settings, "BROWSER_PATH_PREFIXES", ()))
        browser: Callable[[HttpRequest], Any] = get_response
        self.view_hooks: list[Callable[..., Any]] = []
        for path in reversed(getattr(settings, "BROWSER_MIDDLEWARE", [])):
            instance = import_string(path)(browser)
            if hasattr(instance, "process_view"):
                self.view_hooks.insert(0, instance.process_view)
            browser = instance
        self.browser = browser
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def _for_browser(self, request: HttpRequest) -> bool:
        return request.path_info.startswith(self.prefixes)

    def __call__(self, request: HttpRequest) -> Any:
        return (self.browser if self._for_browser(request) else self.get_response)(request)

    def process_view(
        self, request: HttpRequest, view: Callable[..., Any], args: Any, kwargs: Any
    ) -> HttpResponse | None:
        if not self._for_browser(request):
            return None
        for hook in self.view_hooks:
            response = hook(request, view, args, kwargs)
            if response is not None:
                return response  # type: ignore[no-any-return]
        return None


class ClientAddressMiddleware(SyncAndAsyncMiddleware):
    """First in the stack, so every later reader of REMOTE_ADDR sees the resolved client."""

    def before(self, request: HttpRequest) -> None:
        if "PEER_ADDR" not in request.META:
            resolve_into(request)
        return None
