"""A real HTTP server on 127.0.0.1 for connector tests.

It records every request (method, path, headers, body) and answers by path:
- `/status/<code>`: that status (a JSON body);
- `/redirect?to=<url>`: 302 to that URL;
- `/hold`: waits until `release` is set (a worker killed mid-call), then 200;
- `/flaky/<n>`: 503 for the first n requests to that path, then 200;
- anything else: 200 with a JSON echo of the request.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body)


class Receiver:
    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.release = threading.Event()
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver._lock:
                    receiver.requests.append(
                        Received(self.command, self.path, dict(self.headers.items()), body)
                    )
                    seen = sum(1 for r in receiver.requests if r.path == self.path)
                parts = urlsplit(self.path)
                if parts.path.startswith("/status/"):
                    return self._answer(int(parts.path.rsplit("/", 1)[1]), {"error": "scripted"})
                if parts.path == "/redirect":
                    self.send_response(302)
                    self.send_header("Location", parse_qs(parts.query)["to"][0])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return None
                if parts.path == "/hold":
                    receiver.release.wait(timeout=30)
                if parts.path.startswith("/flaky/") and seen <= int(parts.path.rsplit("/", 1)[1]):
                    return self._answer(503, {"error": "overloaded"})
                echo = {"method": self.command, "path": self.path, "body": body.decode(errors="replace")}
                return self._answer(200, echo)

            def _answer(self, status: int, payload: dict) -> None:
                raw = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except OSError:
                    pass  # the client went away

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle  # noqa: N815 - http.server naming

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def received(self, path: str | None = None) -> list[Received]:
        with self._lock:
            return [r for r in self.requests if path is None or urlsplit(r.path).path == path]

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
