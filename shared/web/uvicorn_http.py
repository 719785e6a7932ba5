"""uvicorn's HTTP protocol with a bound on the time a request's first line and headers may take:
`uvicorn ... --http shared.web.uvicorn_http:HeadBoundHttpToolsProtocol` (both webs, deploy/Procfile).

uvicorn streams a request's body to the application, where `shared.web.deadline` bounds it (408
`request_timeout`); but before the application is called there is no bound at all: a client
sending its headers a byte every few seconds holds a connection for as long as it likes (uvicorn's
keep-alive timeout only runs between requests). Here a connection gets `REQUEST_BODY_TIMEOUT_SECONDS`
(the settings of the service the process serves) from its opening, and after each response, to
complete the next request's headers: past that, a request that has begun (any byte of it) is
answered 408 `request_timeout` and closed; a connection that sent nothing is closed without an
answer. (The daphne wrapper this replaced could answer only once a request line was complete.)
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from django.conf import settings
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from shared.api import errors


def _seconds() -> float:
    return float(getattr(settings, "REQUEST_BODY_TIMEOUT_SECONDS", 30))


class HeadBoundHttpToolsProtocol(HttpToolsProtocol):
    _head_timer: asyncio.TimerHandle | None = None
    _head_begun = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        self._head_begun = True
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        # From here the body is the application's to bound (shared.web.deadline).
        self._cancel_head_timer()
        self._head_begun = False
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # The next request's head gets the same bound, unless it already arrived (pipelined).
        if not self.transport.is_closing() and not self.pipeline and self._head_timer is None:
            self._arm_head_timer()

    def _arm_head_timer(self) -> None:
        seconds = _seconds()
        if seconds > 0:
            self._head_timer = self.loop.call_later(seconds, self._head_timeout)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timeout(self) -> None:
        self._head_timer = None
        if self.transport.is_closing():
            return
        if self._head_begun:
            self.transport.write(_timeout_response())
        self.transport.close()


def _timeout_response() -> bytes:
    content = json.dumps(errors.RequestTimeout().body()).encode()
    head: list[Any] = [
        b"HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\n",
        b"Connection: close\r\nContent-Length: ",
        str(len(content)).encode(),
        b"\r\n\r\n",
    ]
    return b"".join(head) + content
