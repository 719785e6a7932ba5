"""The negotiation shortcut answers exactly as DRF's own negotiation does."""

from __future__ import annotations

import pytest
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from shared.api.negotiation import JSONFirstNegotiation

ACCEPTS = [None, "", "*/*", "application/json", "application/json; indent=4", "text/html", "application/*"]


def outcome(negotiator, accept, query, renderers):
    extra = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(APIRequestFactory().get(f"/x{query}", **extra))
    try:
        renderer, media_type = negotiator.select_renderer(request, renderers)
    except NotAcceptable:
        return "406"
    except Exception as exc:  # noqa: BLE001 - parity: whatever DRF raises, ours must raise the same
        return type(exc).__name__
    return type(renderer).__name__, media_type


@pytest.mark.parametrize("accept", ACCEPTS)
@pytest.mark.parametrize("query", ["", "?format=json", "?format=xml"])
@pytest.mark.parametrize("renderers", [[JSONRenderer()], [JSONRenderer(), BrowsableAPIRenderer()]])
def test_same_renderer_and_media_type_as_drf(accept, query, renderers):
    expected = outcome(DefaultContentNegotiation(), accept, query, renderers)
    assert outcome(JSONFirstNegotiation(), accept, query, renderers) == expected
