"""Content negotiation with a shortcut for the common case of a JSON-only API view."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer

# Accept headers (or none) that DRF's negotiation answers with the only renderer, JSON, as its media type.
_PLAIN = frozenset({None, "*/*", "application/json"})


class JSONFirstNegotiation(DefaultContentNegotiation):
    """A view with one renderer (every API view: JSON), asked without a format override and with no
    Accept header or one of `_PLAIN`, gets that renderer without DRF parsing the header and ranking
    media types on every request; anything else is negotiated as before (406 included)."""

    def select_renderer(
        self, request: Any, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> Any:
        renderers = renderers if isinstance(renderers, list) else list(renderers)  # DRF passes a list
        if (
            len(renderers) == 1
            and not format_suffix
            and request.META.get("HTTP_ACCEPT") in _PLAIN
            and self.settings.URL_FORMAT_OVERRIDE not in request.query_params
        ):
            return renderers[0], renderers[0].media_type
        return super().select_renderer(request, renderers, format_suffix)
