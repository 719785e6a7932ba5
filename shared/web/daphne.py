"""daphne with a bound on the time a request may take to arrive: `python -m shared.web.daphne`
takes daphne's own arguments.

daphne (through Twisted) reads a request's headers and whole body before it calls the application,
and its only read timeout is an idle one, reset by every byte: a client sending a byte every few
seconds keeps a connection for as long as it likes, and `--http-timeout` starts counting only once
the request has arrived. Here each request gets `REQUEST_BODY_TIMEOUT_SECONDS` from its first line
to its last body byte, plus one second for every `REQUEST_BODY_MIN_RATE` bytes of body received
(so an honest slow upload still arrives); past that the client gets 408 `request_timeout` and the
connection is closed. daphne's own timer checks every request every 2 s, so the bound is kept to
within 2 s. Twisted makes a request only once its first line is complete, so a connection that has
not completed a request line within the same bound of opening (or of its previous response) is
closed without an answer.
"""

from __future__ import annotations

import json
import time
from typing import Any

import daphne.server
from daphne.cli import CommandLineInterface
from daphne.http_protocol import HTTPFactory, WebRequest
from django.conf import settings
from twisted.internet import reactor

from shared.api import errors


def _seconds() -> float:
    return float(getattr(settings, "REQUEST_BODY_TIMEOUT_SECONDS", 30))


def _close_unless_a_request_began(channel: Any, requests_before: int) -> None:
    if getattr(channel, "requests_begun", 0) == requests_before and channel.transport is not None:
        channel.transport.loseConnection()


def _watch_for_request_line(channel: Any) -> None:
    if _seconds() > 0:
        begun = getattr(channel, "requests_begun", 0)
        timer: Any = reactor  # the installed reactor; its interface types confuse mypy
        timer.callLater(_seconds(), _close_unless_a_request_began, channel, begun)


class BoundedWebRequest(WebRequest):
    def __init__(self, channel: Any, *args: Any, **kwargs: Any) -> None:
        # Twisted makes the request at its first line, so the clock covers headers and body.
        self.read_started = time.monotonic()
        self.read_done = False
        self.body_received = 0
        channel.requests_begun = getattr(channel, "requests_begun", 0) + 1
        super().__init__(channel, *args, **kwargs)

    def finish(self) -> None:
        channel = self.channel
        super().finish()
        if channel is not None:  # a kept-alive connection's next request line gets the same bound
            _watch_for_request_line(channel)

    def handleContentChunk(self, data: bytes) -> None:  # noqa: N802 - Twisted's name
        self.body_received += len(data)
        super().handleContentChunk(data)

    def process(self) -> Any:
        self.read_done = True
        return super().process()

    def check_timeouts(self) -> None:
        if not self.read_done and time.monotonic() > self._deadline():
            self._answer_timeout()
            return
        super().check_timeouts()

    def _deadline(self) -> float:
        seconds = _seconds()
        if seconds <= 0:
            return float("inf")
        rate = int(getattr(settings, "REQUEST_BODY_MIN_RATE", 0))
        return self.read_started + seconds + (self.body_received / rate if rate > 0 else 0.0)

    def _answer_timeout(self) -> None:
        self.read_done = True  # answered once
        body = errors.RequestTimeout().body()
        content = json.dumps(body).encode()
        head = (
            b"HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\n"
            b"Connection: close\r\nContent-Length: " + str(len(content)).encode() + b"\r\n\r\n"
        )
        # Written straight to the connection: the request never became a Twisted response.
        self.channel.transport.write(head + content)
        self.channel.transport.loseConnection()


class BoundedHTTPFactory(HTTPFactory):
    def buildProtocol(self, addr: Any) -> Any:  # noqa: N802 - Twisted's name
        protocol = super().buildProtocol(addr)
        protocol.requestFactory = BoundedWebRequest
        # Twisted's protocol switcher wraps the HTTP/1.1 channel the requests are made on.
        _watch_for_request_line(protocol._channel)
        return protocol


def main() -> None:
    # daphne's Server builds its HTTP factory by this module-level name.
    daphne.server.HTTPFactory = BoundedHTTPFactory  # type: ignore[misc]
    CommandLineInterface.entrypoint()


if __name__ == "__main__":
    main()
