"""A bound on the time a request body may take to arrive (slow-body "slowloris" attacks).

ASGI servers that stream bodies to the application (uvicorn) call it once the headers are in and
then wait on the client for each body chunk, for as long as the client keeps the connection alive:
a client sending one byte every few seconds holds a connection, and under the case web a request
thread, for as long as it likes. `body_deadline` gives the whole body `seconds` from the start of
the request, plus one second for every `min_rate` bytes already received, so a large upload on an
honest, slow link still arrives while a trickle cannot last. Past the deadline the client gets 408
`request_timeout` with `Connection: close` (the server then drops the connection) and the
application sees the client as gone; anything the application still tries to send is dropped.

Servers that read the whole body before calling the application (daphne, the test servers) never
reach the deadline here. The time a request's first line and headers take is bounded in the server:
`shared.web.uvicorn_http` (both webs as deployed).
"""

from __future__ import annotations

import asyncio
from typing import Any

from shared.api import errors
from shared.api.handler import error_response

Message = dict[str, Any]


def body_deadline(app: Any, *, seconds: float, min_rate: int) -> Any:
    """Wraps an ASGI app; `seconds` <= 0 turns the bound off."""
    if seconds <= 0:
        return app

    async def bounded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        cycle = _Cycle(receive, send, seconds=seconds, min_rate=min_rate)
        await app(scope, cycle.receive, cycle.send)

    return bounded


class _Cycle:
    def __init__(self, receive: Any, send: Any, *, seconds: float, min_rate: int) -> None:
        self._receive, self._send = receive, send
        self._loop = asyncio.get_running_loop()
        self._started = self._loop.time()
        self._seconds, self._min_rate = seconds, min_rate
        self._received = 0
        self._body_done = False
        self._response_started = False
        self._timed_out = False

    def _deadline(self) -> float:
        allowance = self._received / self._min_rate if self._min_rate > 0 else 0.0
        return self._started + self._seconds + allowance

    async def receive(self) -> Message:
        if self._timed_out:
            return {"type": "http.disconnect"}
        if self._body_done:  # after the body only the disconnect is awaited: no bound on that
            message: Message = await self._receive()
            return message
        try:
            message = await asyncio.wait_for(self._receive(), max(0.0, self._deadline() - self._loop.time()))
        except TimeoutError:
            await self._time_out()
            return {"type": "http.disconnect"}
        if message["type"] == "http.request":
            self._received += len(message.get("body", b""))
            self._body_done = not message.get("more_body", False)
        return message

    async def send(self, message: Message) -> None:
        if self._timed_out:
            return  # the 408 is the answer; the application's late one has nowhere to go
        if message["type"] == "http.response.start":
            self._response_started = True
        await self._send(message)

    async def _time_out(self) -> None:
        self._timed_out = True
        if self._response_started:
            return
        response = error_response(errors.RequestTimeout())
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.items()]
        headers += [(b"content-length", str(len(response.content)).encode()), (b"connection", b"close")]
        await self._send({"type": "http.response.start", "status": 408, "headers": headers})
        await self._send({"type": "http.response.body", "body": response.content})
