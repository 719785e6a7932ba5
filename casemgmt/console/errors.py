"""Error pages: console URLs answer in HTML (a page with the navigation), everything else in the
API's JSON error shape."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

from casemgmt.console.branding import page_context
from shared.api import views as api_views

CONSOLE_PREFIX = "/console/"


def _page(request: HttpRequest, status: int, title: str, message: str) -> HttpResponse:
    user = getattr(request, "user", None)
    signed_in = user if user is not None and user.is_authenticated else None
    try:
        context = page_context(signed_in)
    except Exception:  # noqa: BLE001 - the error page itself must never fail (e.g. the database is down)
        context = page_context(None)
    context.update(title=title, message=message, status=status)
    return render(request, "console/error.html", context, status=status)


def handler404(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if request.path.startswith(CONSOLE_PREFIX):
        return _page(request, 404, _("Page not found"), _("There is no page at this address."))
    return api_views.handler404(request, exception)


def handler403(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if request.path.startswith(CONSOLE_PREFIX):
        return _page(request, 403, _("Not allowed"), _("You may not open this page."))
    return api_views.handler403(request, exception)


def handler500(request: HttpRequest) -> HttpResponse:
    if request.path.startswith(CONSOLE_PREFIX):
        return _page(
            request, 500, _("Something went wrong"), _("The page could not be shown. Try again shortly.")
        )
    return api_views.handler500(request)
