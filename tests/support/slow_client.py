"""A client that trickles a request over a raw socket, one byte at a time, and reports when and how
the server answered: the slow-body ("slowloris") attack, bounded by the caller's own limit."""

from __future__ import annotations

import select
import socket
import time
from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass
class SlowResult:
    status: int | None  # None: no answer (see `closed`)
    closed: bool  # the server answered or closed the connection before `give_up_after`
    body: bytes
    seconds: float  # from the first byte sent to the answer (or to giving up)
    bytes_sent: int


def trickle(base: str, at_once: bytes, trickled: bytes, *, every: float, give_up_after: float) -> SlowResult:
    """Sends `at_once`, then `trickled` one byte per `every` seconds, until the server answers or
    closes, or `give_up_after` seconds pass."""
    url = urlsplit(base)
    started = time.monotonic()
    sent = 0
    with socket.create_connection((url.hostname, url.port), timeout=5) as sock:
        pending = trickled
        sock.sendall(at_once)
        received, closed = b"", False
        while time.monotonic() - started < give_up_after:
            readable, _, _ = select.select([sock], [], [], every)
            if readable:
                received, closed = _read_all(sock), True
                break
            if pending:
                try:
                    sock.sendall(pending[:1])
                except OSError:  # the server closed while we were still sending
                    received, closed = _read_all(sock), True
                    break
                pending, sent = pending[1:], sent + 1
        seconds = time.monotonic() - started
    if not received:
        return SlowResult(None, closed, b"", seconds, sent)
    status_line, _, rest = received.partition(b"\r\n")
    return SlowResult(int(status_line.split()[1]), closed, rest.partition(b"\r\n\r\n")[2], seconds, sent)


def _read_all(sock: socket.socket) -> bytes:
    chunks = []
    sock.settimeout(5)
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except (TimeoutError, ConnectionResetError):
        pass
    return b"".join(chunks)
