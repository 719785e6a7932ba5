"""A request body sent with chunked transfer encoding (no Content-Length) is read like any other
under the real ASGI server, and the maximum body size still answers 413."""

from __future__ import annotations

import json

import httpx
import pytest
from django.conf import settings

from tests.support.processes import start_ready_asgi_server


@pytest.fixture(scope="module")
def orch_asgi(subprocess_env):
    server, base = start_ready_asgi_server(
        name="orch-asgi",
        application="orchestrator.config.asgi:application",
        env=subprocess_env,
        health_path="/api/health",
        ready_statuses=(200, 503),
    )
    try:
        yield base
    finally:
        server.stop()


def chunked(data: bytes, size: int = 7):
    # A generator body makes httpx send `Transfer-Encoding: chunked` and no Content-Length.
    for start in range(0, len(data), size):
        yield data[start : start + size]


def post(base: str, body: bytes, size: int = 7) -> httpx.Response:
    return httpx.post(
        f"{base}/api/webhooks",
        content=chunked(body, size),
        headers={"Content-Type": "application/json"},
        timeout=30,
    )


def test_chunked_json_body_is_read(orch_asgi):
    response = post(orch_asgi, json.dumps({"name": "hook", "url": "not a url"}).encode())
    assert response.request.headers.get("transfer-encoding") == "chunked"
    assert response.status_code == 400, response.text
    fields = {e["field"] for e in response.json()["details"]["errors"]}
    # name arrived; only what the body lacks or gets wrong is reported.
    assert "name" not in fields and "url" in fields, fields


def test_chunked_body_over_the_limit_is_413(orch_asgi):
    padding = "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 10)
    response = post(orch_asgi, json.dumps({"name": padding}).encode(), size=64 * 1024)
    assert response.status_code == 413, response.text
    assert response.json()["code"] == "payload_too_large"
