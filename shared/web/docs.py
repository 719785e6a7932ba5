"""The API docs page, with every asset served by the service itself."""

from __future__ import annotations

from drf_spectacular.views import SpectacularRedocView


class RedocDocsView(SpectacularRedocView):
    """Redoc from the pinned copy in drf-spectacular-sidecar (`REDOC_DIST = "SIDECAR"`), on a page
    that loads no web fonts (Redoc falls back to the system's), so it renders with no network."""

    template_name = "shared_web/redoc.html"
