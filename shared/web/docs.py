"""The API docs page, with every asset served by the service itself."""

from __future__ import annotations

from functools import cache

from django.contrib.staticfiles import finders
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path, reverse
from django.views.decorators.http import require_GET
from drf_spectacular.views import SpectacularRedocView

REDOC_BUNDLE = "drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"
# Redoc's menu footer draws Redocly's logo from their CDN, a fetch the page's own policy (images
# from the service or data: URLs only) refuses, logging an error in every browser. The image is
# decoration: an empty data: image takes its place.
REDOCLY_LOGO = b'"https://cdn.redoc.ly/redoc/logo-mini.svg"'
EMPTY_IMAGE = b"\"data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E\""


@cache
def redoc_bundle() -> bytes:
    """The pinned Redoc bundle of drf-spectacular-sidecar, with no address outside the service."""
    located = finders.find(REDOC_BUNDLE)
    if not isinstance(located, str):
        raise ImproperlyConfigured(f"{REDOC_BUNDLE} is not installed (drf-spectacular-sidecar)")
    with open(located, "rb") as bundle:
        return bundle.read().replace(REDOCLY_LOGO, EMPTY_IMAGE)


@require_GET
def redoc_bundle_view(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(redoc_bundle(), content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = "public, max-age=3600"
    return response


class RedocDocsView(SpectacularRedocView):
    """Redoc from the pinned copy in drf-spectacular-sidecar (`REDOC_DIST = "SIDECAR"`), on a page
    that loads no web fonts (Redoc falls back to the system's), so it renders with no network."""

    template_name = "shared_web/redoc.html"

    def _redoc_standalone(self) -> str:  # type: ignore[override]
        return reverse("docs-redoc")


def docs_urls(*, schema_url_name: str) -> list[URLPattern]:
    """`/docs` and the Redoc bundle it loads."""
    return [
        path("docs", RedocDocsView.as_view(url_name=schema_url_name), name="docs"),
        path("docs/redoc.standalone.js", redoc_bundle_view, name="docs-redoc"),
    ]
