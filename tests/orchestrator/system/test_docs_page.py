"""The orchestrator's API docs page works offline: every asset is its own, pinned, under a
Content-Security-Policy that forbids other origins."""

from __future__ import annotations

import pytest

from tests.support.docs_page import (
    assert_assets_local,
    assert_docs_console_clean,
    assert_docs_render_offline,
    assert_html_pages_carry_policy,
    assert_policy_first_party,
)

pytestmark = pytest.mark.django_db(transaction=True)


def test_docs_assets_are_served_by_the_service(live_server):
    policy = assert_assets_local(live_server.url)
    assert_policy_first_party(policy)


def test_every_html_page_carries_the_policy(client):
    assert_html_pages_carry_policy(client)


def test_docs_render_in_chromium_with_the_network_cut_off(live_server):
    assert_docs_render_offline(
        live_server.url,
        title="Orchestrator API",
        operation="listDags",
        screenshot="orchestrator-docs-offline.png",
    )


def test_docs_page_logs_no_console_error(live_server):
    assert_docs_console_clean(live_server.url, operation="listDags")
