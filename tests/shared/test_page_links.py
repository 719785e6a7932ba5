"""`next`/`prev` links keep every other query parameter, repeated ones and their order included."""

from __future__ import annotations

from django.test import RequestFactory

from shared.api.pagination import Page, page_links


def test_links_keep_the_other_parameters_in_order_and_replace_limit_and_offset():
    request = RequestFactory().get("/cases?status=active&offset=20&tag=a&tag=b&q=caf%C3%A9+%26+co&limit=10")
    next_url, prev_url = page_links(request, Page(limit=10, offset=20), total=100)
    assert (
        next_url == "http://testserver/cases?status=active&offset=30&tag=a&tag=b&q=caf%C3%A9+%26+co&limit=10"
    )
    assert (
        prev_url == "http://testserver/cases?status=active&offset=10&tag=a&tag=b&q=caf%C3%A9+%26+co&limit=10"
    )
    assert request.GET.getlist("offset") == ["20"]  # the request's own parameters are untouched


def test_limit_and_offset_are_added_when_absent():
    request = RequestFactory().get("/cases?status=active")
    assert page_links(request, Page(limit=25, offset=0), total=30) == (
        "http://testserver/cases?status=active&limit=25&offset=25",
        None,
    )
