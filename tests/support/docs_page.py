"""Checks shared by both services' docs-page tests."""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

import httpx

from tests.support import browser

ASSET = re.compile(r"""<(?:script|link)\b[^>]*?\b(?:src|href)=["']([^"']+)["']""", re.IGNORECASE)


def assert_assets_local(base_url: str, path: str = "/docs") -> str:
    """Every script and stylesheet the page names is on the page's own origin and answers 200;
    returns the page's Content-Security-Policy."""
    page = httpx.get(base_url + path)
    assert page.status_code == 200
    assets = ASSET.findall(page.text)
    assert assets, "the docs page names no script"
    origin = urlsplit(base_url).netloc
    for asset in assets:
        url = urljoin(base_url + path, asset)
        assert urlsplit(url).netloc == origin, f"{asset} is not served by the service"
        assert httpx.get(url).status_code == 200, f"{asset} does not answer"
    return page.headers["Content-Security-Policy"]


def assert_policy_first_party(policy: str) -> None:
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["default-src"] == "'self'"
    for name, sources in directives.items():
        for source in sources.split():
            assert source in {"'self'", "'none'", "'unsafe-inline'", "data:", "blob:"}, (name, source)


def assert_html_pages_carry_policy(client) -> None:
    """An HTML page (the admin login) carries the first-party policy; the JSON schema carries none."""
    response = client.get("/admin/login/")
    assert response["Content-Type"].startswith("text/html")
    assert_policy_first_party(response["Content-Security-Policy"])
    assert "Content-Security-Policy" not in client.get("/openapi.json")


def assert_docs_render_offline(base_url: str, *, title: str, operation: str, screenshot: str) -> None:
    """Chromium, with the network cut off, renders the docs page: the schema's `title` and the
    anchor of `operation` are in the page, and a screenshot is written."""
    dom = browser.dump_dom(base_url + "/docs")
    # Redoc rendered the schema: its title and an operation's path are in the page.
    assert title in dom
    assert f"operation/{operation}" in dom
    assert browser.screenshot(base_url + "/docs", screenshot).stat().st_size > 0


def assert_docs_console_clean(base_url: str, *, operation: str) -> None:
    """Chromium logs no error while the docs page loads and renders (a blocked fetch, such as an
    asset the page's own policy refuses, is one)."""
    errors = browser.console_errors(base_url + "/docs", ready_selector=f'[id="operation/{operation}"]')
    assert errors == [], errors
