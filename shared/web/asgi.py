"""HTTP through Django's WSGI handler inside an ASGI server (WebSockets stay ASGI).

Django's ASGI handler runs each request's synchronous code (every view, middleware and query here
is synchronous) on a fresh thread, with async/sync hand-overs around it: about twice the CPU of the
same request under a WSGI server. `wsgi_http` hands each HTTP request to Django's WSGI handler on a
fixed pool of threads instead (threads and their database connections reused), so one ASGI server
process serves the API at WSGI cost and WebSockets on the same port.

A request crosses between the event loop and its thread once each way: the loop reads the body
(the API's are small), the thread runs Django and returns the whole answer, the loop sends it. A
general bridge (a2wsgi) crosses for the response's start, for each chunk and for the end, each a
wake-up of the loop and a wait for it in the thread; under load those waits and the GIL hand-overs
they cause cost about as much CPU as the request itself. The general bridge still serves what
needs streaming: a body over `WHOLE_BODY_BYTES` (document uploads) and a streaming response
(downloads, exports, event streams), whose chunks it sends as they are made.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import io
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from a2wsgi import WSGIMiddleware
from a2wsgi.wsgi import build_environ

from shared.api import errors
from shared.api.handler import error_response

Scope = dict[str, Any]

# Bodies up to this size are read by the loop before the request goes to its thread; larger ones
# stream to the application through the general bridge.
WHOLE_BODY_BYTES = 1024 * 1024


def wsgi_http(wsgi_app: Any, *, threads: int, max_body_bytes: int) -> Any:
    """An ASGI app for `http` scopes that runs `wsgi_app` on `threads` threads."""
    executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="wsgi")
    bridge: Any = WSGIMiddleware(wsgi_app, workers=threads)
    bridge.executor = executor  # one pool of threads (and of database connections) for both paths

    async def app(scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await bridge(scope, receive, send)
            return
        length = _content_length(scope)
        if length is None and _chunked(scope):
            body = await _read_chunked(receive, send, max_body_bytes)
            if body is None:
                return
            headers = [(k, v) for k, v in scope["headers"] if k != b"transfer-encoding"]
            headers.append((b"content-length", str(len(body)).encode()))
            scope = dict(scope, headers=headers)
        elif length is not None and length > WHOLE_BODY_BYTES:
            await bridge(scope, receive, send)
            return
        else:
            body = await _read_body(receive)
            if body is None:
                return
        loop = asyncio.get_running_loop()
        environ: dict[str, Any] = dict(build_environ(scope, io.BytesIO(body)))  # type: ignore[arg-type]  # any file-like body
        run = functools.partial(contextvars.copy_context().run, _respond, wsgi_app, environ, loop, send)
        answer = await loop.run_in_executor(executor, run)
        if answer is not None:
            status, headers, content = answer
            if not any(name == b"content-length" for name, _ in headers):
                headers.append((b"content-length", str(len(content)).encode()))
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": content})

    return app


def _respond(wsgi_app: Any, environ: dict[str, Any], loop: asyncio.AbstractEventLoop, send: Any) -> Any:
    """In a pool thread: the whole answer as (status, headers, body) for the loop to send, or None
    when the response streams (sent from here, chunk by chunk, as it is made)."""
    started: list[Any] = []
    written: list[bytes] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        encoded = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers]
        started[:] = [int(status.split(" ", 1)[0]), encoded]
        return written.append  # WSGI's legacy write(); Django never calls it

    result = wsgi_app(environ, start_response)
    try:
        if not getattr(result, "streaming", False):
            return started[0], started[1], b"".join([*written, *result])

        def send_now(message: dict[str, Any]) -> None:
            asyncio.run_coroutine_threadsafe(send(message), loop).result()

        send_now({"type": "http.response.start", "status": started[0], "headers": started[1]})
        for chunk in [*written, *result]:
            if chunk:
                send_now({"type": "http.response.body", "body": chunk, "more_body": True})
        send_now({"type": "http.response.body", "body": b""})
        return None
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _chunked(scope: Scope) -> bool:
    return any(name == b"transfer-encoding" for name, _ in scope["headers"])


async def _read_body(receive: Any) -> bytes | None:
    """The request's body (None: the client left first)."""
    body = b""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body += message.get("body", b"")
        if not message.get("more_body", False):
            return body


async def _read_chunked(receive: Any, send: Any, max_body_bytes: int) -> bytes | None:
    """A body without Content-Length (chunked) is read whole first and given its length: a WSGI
    request reads exactly CONTENT_LENGTH bytes, so it would otherwise look empty, and Django's body
    size limits would never apply. Bodies over `max_body_bytes` (above every limit the service sets)
    are refused here (None: answered, or the client left)."""
    body = bytearray()
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body += message.get("body", b"")
        more = message.get("more_body", False)
        if len(body) > max_body_bytes:
            await _send_response(send, error_response(errors.PayloadTooLarge()))
            return None
    return bytes(body)


async def _send_response(send: Any, response: Any) -> None:
    headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.items()]
    headers.append((b"content-length", str(len(response.content)).encode()))
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": response.content})
