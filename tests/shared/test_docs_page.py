"""The case service's API docs page works offline: every asset is its own, pinned, under a
Content-Security-Policy that forbids other origins."""

from __future__ import annotations

import pytest

from tests.support import browser
from tests.support.docs_page import assert_assets_local, assert_policy_first_party

pytestmark = pytest.mark.django_db(transaction=True)


def test_docs_assets_are_served_by_the_service(live_server):
    policy = assert_assets_local(live_server.url)
    assert_policy_first_party(policy)


def test_every_html_page_carries_the_policy(client):
    response = client.get("/admin/login/")
    assert response["Content-Type"].startswith("text/html")
    assert_policy_first_party(response["Content-Security-Policy"])
    assert "Content-Security-Policy" not in client.get("/openapi.json")


def test_docs_render_in_chromium_with_the_network_cut_off(live_server):
    dom = browser.dump_dom(live_server.url + "/docs")
    # Redoc rendered the schema: its title and an operation's path are in the page.
    assert "Case service API" in dom
    assert "operation/cases_list" in dom
    assert browser.screenshot(live_server.url + "/docs", "case-docs-offline.png").stat().st_size > 0
