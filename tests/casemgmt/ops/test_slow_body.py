"""The case web as deployed (deploy/Procfile's uvicorn command) bounds the time a request may take
to arrive: a client trickling its body, or its headers (shared.web.uvicorn_http), a byte at a time
gets 408 `request_timeout` once the bound (2 s here) passes, and the connection is closed, instead
of holding it for as long as it likes; one that never completes a request line is closed."""

from __future__ import annotations

import json

import pytest

from tests.support.processes import start_procfile_server
from tests.support.slow_client import trickle

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

BOUND = 2.0
HEAD = (
    b"POST /auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Content-Length: 400\r\n\r\n"
)


@pytest.fixture(scope="module")
def web(subprocess_env):
    env = {**subprocess_env, "CASE_REQUEST_BODY_TIMEOUT_SECONDS": str(BOUND)}
    server, base = start_procfile_server("case-web", env=env, health_path="/healthz")
    try:
        yield base
    finally:
        server.stop()


def test_a_trickled_body_is_cut_off_with_408(web):
    result = trickle(web, HEAD, b"x" * 400, every=0.5, give_up_after=BOUND + 10)
    assert result.status == 408, result
    assert json.loads(result.body)["code"] == "request_timeout"
    assert BOUND - 0.5 < result.seconds < BOUND + 3, result
    assert result.bytes_sent < 400


def test_a_body_sent_in_time_is_answered(web):
    body = json.dumps({"email": "nobody@example.test", "password": "wrong-password-123"}).encode()
    head = HEAD.replace(b"Content-Length: 400", f"Content-Length: {len(body)}".encode())
    result = trickle(web, head, body, every=0.01, give_up_after=BOUND + 10)
    assert result.status == 401, result


def test_trickled_headers_are_cut_off(web):
    # Past the request line: a request exists, so it is answered.
    line = b"POST /auth/login HTTP/1.1\r\n"
    result = trickle(web, line, HEAD[len(line) :], every=0.5, give_up_after=BOUND + 10)
    assert result.status == 408, result
    assert json.loads(result.body)["code"] == "request_timeout"
    assert BOUND - 0.5 < result.seconds < BOUND + 3, result
    # Within the request line: a request has begun too.
    result = trickle(web, b"", HEAD, every=0.5, give_up_after=BOUND + 10)
    assert result.status == 408 and result.closed, result
    assert BOUND - 0.5 < result.seconds < BOUND + 3, result
    # Nothing sent at all: the connection is closed without an answer.
    result = trickle(web, b"", b"", every=0.5, give_up_after=BOUND + 10)
    assert result.closed and result.status is None, result
    assert BOUND - 0.5 < result.seconds < BOUND + 3, result
