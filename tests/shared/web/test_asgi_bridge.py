"""`shared.web.asgi.wsgi_http`: a WSGI application served to an ASGI server, answered whole in one
hand-over, or streamed when the response or the request body streams."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from shared.web.asgi import WHOLE_BODY_BYTES, wsgi_http


class Streamed(list):
    streaming = True  # as Django's streaming responses say of themselves


def application(environ: dict[str, Any], start_response: Any) -> Any:
    """Echoes what it was sent, with the thread it ran on; `/stream` answers in three chunks."""
    body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    thread = threading.current_thread().name.encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("X-Thread", thread.decode())])
    if environ["PATH_INFO"] == "/stream":
        return Streamed([b"one ", b"two ", b"three"])
    return [environ["REQUEST_METHOD"].encode(), b" ", str(len(body)).encode(), b" ", body[:5]]


def serve(path: str, body: bytes = b"", chunks: int = 1, headers: list | None = None) -> list[dict[str, Any]]:
    app = wsgi_http(application, threads=2, max_body_bytes=8 * WHOLE_BODY_BYTES)
    size = len(body) // chunks + 1
    parts = [body[i : i + size] for i in range(0, len(body), size)] or [b""]
    incoming = [
        {"type": "http.request", "body": p, "more_body": i < len(parts) - 1} for i, p in enumerate(parts)
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    if headers is None:
        headers = [(b"content-length", str(len(body)).encode())] if body else []
    scope = {
        "type": "http", "http_version": "1.1", "method": "POST" if body else "GET", "path": path,
        "raw_path": path.encode(), "root_path": "", "query_string": b"", "headers": headers,
        "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 5000), "scheme": "http",
    }  # fmt: skip
    asyncio.run(app(scope, receive, send))
    return sent


def test_a_whole_answer_is_one_start_and_one_body_with_its_length():
    sent = serve("/", b"hello world", chunks=3)
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    assert sent[1]["body"] == b"POST 11 hello" and not sent[1].get("more_body")
    headers = dict(sent[0]["headers"])
    assert headers[b"content-length"] == b"13" and headers[b"x-thread"].startswith(b"wsgi")


def test_a_streaming_response_is_sent_chunk_by_chunk():
    sent = serve("/stream")
    assert [m.get("body") for m in sent[1:]] == [b"one ", b"two ", b"three", b""]
    assert [m.get("more_body", False) for m in sent[1:]] == [True, True, True, False]
    assert b"content-length" not in dict(sent[0]["headers"])


def test_a_large_body_streams_to_the_application():
    body = b"x" * (WHOLE_BODY_BYTES + 10)
    sent = serve("/", body, chunks=4)
    assert b"".join(m.get("body", b"") for m in sent[1:]) == f"POST {len(body)} xxxxx".encode()
    assert sent[1]["more_body"] and sent[-1] == {"type": "http.response.body", "body": b""}  # streamed


def test_a_chunked_body_is_given_its_length():
    sent = serve("/", b"abcdef", chunks=2, headers=[(b"transfer-encoding", b"chunked")])
    assert sent[-1]["body"] == b"POST 6 abcde"


def test_a_client_gone_before_its_body_arrived_gets_no_answer():
    app = wsgi_http(application, threads=1, max_body_bytes=1024)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "http_version": "1.1", "method": "POST", "path": "/", "root_path": "",
             "query_string": b"", "headers": [(b"content-length", b"5")], "server": ("h", 80)}  # fmt: skip
    asyncio.run(app(scope, receive, send))
    assert sent == []
