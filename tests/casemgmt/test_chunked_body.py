"""A request body sent with chunked transfer encoding (no Content-Length) is read like any other
under the real ASGI server, and the maximum body size still answers 413."""

from __future__ import annotations

import json

import httpx
from django.conf import settings


def chunked(data: bytes, size: int = 7):
    # A generator body makes httpx send `Transfer-Encoding: chunked` and no Content-Length.
    for start in range(0, len(data), size):
        yield data[start : start + size]


def test_chunked_json_body_is_read(asgi_server):
    body = json.dumps({"email": "someone@example.test"}).encode()
    response = httpx.post(
        f"{asgi_server}/auth/login",
        content=chunked(body),
        headers={"Content-Type": "application/json"},
        timeout=10,
    )
    assert response.request.headers.get("transfer-encoding") == "chunked"
    assert "content-length" not in response.request.headers
    # The email arrived: only the password is reported missing.
    assert response.status_code == 400, response.text
    assert [e["field"] for e in response.json()["details"]["errors"]] == ["password"]


def test_chunked_body_over_the_limit_is_413(asgi_server):
    padding = "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 10)
    body = json.dumps({"email": "a@example.test", "password": padding}).encode()
    response = httpx.post(
        f"{asgi_server}/auth/login",
        content=chunked(body, size=64 * 1024),
        headers={"Content-Type": "application/json"},
        timeout=30,
    )
    assert response.status_code == 413, response.text
    assert response.json()["code"] == "payload_too_large"
