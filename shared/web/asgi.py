"""HTTP through Django's WSGI handler inside an ASGI server (WebSockets stay ASGI).

Django's ASGI handler runs each request's synchronous code (every view, middleware and query here
is synchronous) on a fresh thread, with async/sync hand-overs around it: about twice the CPU of the
same request under a WSGI server. `wsgi_http` hands each HTTP request to Django's WSGI handler on a
fixed pool of threads instead (one hand-over, threads and their database connections reused), so
one ASGI server process serves the API at WSGI cost and WebSockets on the same port.
"""

from __future__ import annotations

from typing import Any

from a2wsgi import WSGIMiddleware

from shared.api import errors
from shared.api.handler import error_response

Scope = dict[str, Any]


def wsgi_http(wsgi_app: Any, *, threads: int, max_body_bytes: int) -> Any:
    """An ASGI app for `http` scopes that runs `wsgi_app` on `threads` threads."""
    bridge: Any = WSGIMiddleware(wsgi_app, workers=threads)

    async def app(scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and _chunked(scope):
            await _with_length(bridge, scope, receive, send, max_body_bytes)
        else:
            await bridge(scope, receive, send)

    return app


def _chunked(scope: Scope) -> bool:
    return not any(name == b"content-length" for name, _ in scope["headers"]) and any(
        name == b"transfer-encoding" for name, _ in scope["headers"]
    )


async def _with_length(app: Any, scope: Scope, receive: Any, send: Any, max_body_bytes: int) -> None:
    """A body without Content-Length (chunked) is read whole first and given its length: a WSGI
    request reads exactly CONTENT_LENGTH bytes, so it would otherwise look empty, and Django's body
    size limits would never apply. Bodies over `max_body_bytes` (above every limit the service sets)
    are refused here."""
    body = bytearray()
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        body += message.get("body", b"")
        more = message.get("more_body", False)
        if len(body) > max_body_bytes:
            await _send_response(send, error_response(errors.PayloadTooLarge()))
            return
    headers = [(k, v) for k, v in scope["headers"] if k != b"transfer-encoding"]
    headers.append((b"content-length", str(len(body)).encode()))
    replayed = False

    async def replay() -> dict[str, Any]:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}
        return await receive()  # after the body: wait for the disconnect like any request

    await app(dict(scope, headers=headers), replay, send)


async def _send_response(send: Any, response: Any) -> None:
    headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.items()]
    headers.append((b"content-length", str(len(response.content)).encode()))
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": response.content})
