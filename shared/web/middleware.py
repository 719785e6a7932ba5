"""Content-Security-Policy on every HTML page of both services."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

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


class ContentSecurityPolicyMiddleware:
    """Adds the policy to HTML responses that have none of their own (JSON needs none)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            response.get("Content-Type", "").startswith("text/html")
            and "Content-Security-Policy" not in response
        ):
            response["Content-Security-Policy"] = getattr(settings, "CONTENT_SECURITY_POLICY", DEFAULT_POLICY)
        return response
