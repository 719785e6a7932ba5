"""The orchestrator web bounds the time a request may take to arrive, as deployed (deploy/Procfile's
orch-web: uvicorn with shared.web.uvicorn_http's protocol, which bounds the first line and headers)
and under plain uvicorn (the body's bound is the application's, shared.web.deadline): a client
trickling its body, or as deployed its headers, gets 408 `request_timeout` once the bound (2 s
here) passes, and the connection is closed."""

from __future__ import annotations

import json
import sys

import pytest

from tests.support.processes import ServiceProcess, _wait_ready, child_env, free_port, start_procfile_server
from tests.support.slow_client import trickle

pytestmark = [pytest.mark.django_db(transaction=True)]

BOUND = 2.0
HEAD = (
    b"POST /api/webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Content-Length: 400\r\n\r\n"
)


def start_uvicorn(env: dict[str, str]) -> tuple[ServiceProcess, str]:
    port = free_port()
    args = [sys.executable, "-m", "uvicorn", "orchestrator.config.asgi:application", "--host", "127.0.0.1",
            "--port", str(port), "--lifespan", "off", "--no-proxy-headers"]  # fmt: skip
    server = ServiceProcess("orch-uvicorn", args, child_env(env))
    base = f"http://127.0.0.1:{port}"
    _wait_ready(server, base, "/api/health", (200, 503), 60)
    return server, base


@pytest.fixture(scope="module", params=["procfile", "uvicorn"])
def web(request, subprocess_env):
    env = {**subprocess_env, "ORCH_REQUEST_BODY_TIMEOUT_SECONDS": str(BOUND)}
    if request.param == "uvicorn":
        server, base = start_uvicorn(env)
    else:
        server, base = start_procfile_server(
            "orch-web", env=env, health_path="/api/health", ready_statuses=(200, 503)
        )
    try:
        yield request.param, base
    finally:
        server.stop()


def test_a_trickled_body_is_cut_off_with_408(web):
    _, base = web
    result = trickle(base, HEAD, b"x" * 400, every=0.5, give_up_after=BOUND + 10)
    assert result.status == 408, result
    assert json.loads(result.body)["code"] == "request_timeout"
    assert BOUND - 0.5 < result.seconds < BOUND + 3, result


def test_trickled_headers_are_cut_off_as_deployed(web):
    name, base = web
    if name != "procfile":
        pytest.skip("plain uvicorn has no bound on the time headers take (docs/decisions.md)")
    # Past the request line: a request exists, so it is answered.
    line = b"POST /api/webhooks HTTP/1.1\r\n"
    result = trickle(base, line, HEAD[len(line) :], every=0.5, give_up_after=BOUND + 10)
    assert result.status == 408, result
    assert json.loads(result.body)["code"] == "request_timeout"
    assert BOUND - 0.5 < result.seconds < BOUND + 3, result
    # Within the request line: a request has begun too.
    result = trickle(base, b"", HEAD, every=0.5, give_up_after=BOUND + 10)
    assert result.status == 408 and result.closed, result
    assert BOUND - 0.5 < result.seconds < BOUND + 3, result
    # Nothing sent at all: the connection is closed without an answer.
    result = trickle(base, b"", b"", every=0.5, give_up_after=BOUND + 10)
    assert result.closed and result.status is None, result
    assert BOUND - 0.5 < result.seconds < BOUND + 3, result


def test_a_body_sent_in_time_is_answered(web):
    _, base = web
    body = json.dumps({"name": "hook", "url": "not a url"}).encode()
    head = HEAD.replace(b"Content-Length: 400", f"Content-Length: {len(body)}".encode())
    result = trickle(base, head, body, every=0.01, give_up_after=BOUND + 10)
    assert result.status == 400, result
