"""The guarded HTTP client every connector uses to reach the network.

Each request (and each redirect hop) goes through the SSRF guard, then connects to the address the
guard checked while sending the URL's own name as Host and TLS SNI (and verifying the certificate
against that name): no second DNS lookup, so no rebinding window. Timeouts bound connect and read;
the response body is read up to a cap. Every exchange is handed to `on_exchange` with credentials
redacted, for the invocation log.
"""

from __future__ import annotations

import json as jsonlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

import urllib3
from django.conf import settings

from casemgmt.connectors.base import ConnectorError
from casemgmt.connectors.guard import Target, UnsafeTarget, check_url
from casemgmt.connectors.redaction import redact_headers, scrub
from shared.ssrf import network_failure, pinned_request

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD")
REDIRECTS = (301, 302, 303, 307, 308)
MAX_REDIRECTS = 5
BODY_EXCERPT_CHARS = 2000
USER_AGENT = "casemgmt-connectors/1"


@dataclass
class HttpResponse:
    status_code: int
    headers: dict[str, str]
    content: bytes
    url: str
    truncated: bool = False

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return jsonlib.loads(self.content)

    def body_value(self) -> Any:
        """Parsed JSON when the reply is JSON, else its text."""
        if "json" in self.headers.get("content-type", "").lower():
            try:
                return self.json()
            except ValueError:
                pass
        return self.text


def raise_for_status(response: HttpResponse, *, connector: str) -> None:
    """The usual reading of an HTTP status: 2xx ok, 408/429/5xx transient, other 4xx permanent."""
    status = response.status_code
    if status < 400:
        return
    transient = status in (408, 425, 429) or status >= 500
    raise ConnectorError(
        "http_error", f"{connector}: HTTP {status}", transient=transient, status_code=status,
        body=response.body_value(),
    )  # fmt: skip


@dataclass
class GuardedHttp:
    timeout: float = field(default_factory=lambda: float(settings.CONNECTOR_TIMEOUT_SECONDS))
    secrets: Sequence[str] = ()
    on_exchange: Callable[[dict[str, Any]], None] | None = None

    def request(
        self, method: str, url: str, *, headers: Mapping[str, str] | None = None, json: Any = None,
        data: bytes | str | None = None, timeout: float | None = None, follow_redirects: bool = True,
    ) -> HttpResponse:  # fmt: skip
        """Sends one request, following redirects (each hop checked again). Raises ConnectorError:
        `unsafe_target` (refused by the SSRF guard, not transient), `timeout` and `network_error`
        (transient). HTTP error statuses are returned, not raised (see raise_for_status)."""
        method = method.upper()
        if method not in METHODS:
            raise ConnectorError("invalid_input", f"method must be one of {', '.join(METHODS)}")
        headers = {"User-Agent": USER_AGENT, **dict(headers or {})}
        body = self._body(json, data, headers)
        timeout = min(timeout or self.timeout, float(settings.CONNECTOR_MAX_TIMEOUT_SECONDS))
        for _hop in range(MAX_REDIRECTS + 1):
            response = self._send(method, url, headers, body, timeout)
            location = response.headers.get("location")
            if not follow_redirects or response.status_code not in REDIRECTS or not location:
                return response
            method, body, headers = self._redirected(method, body, headers, response.status_code)
            url = urljoin(url, location)
        raise ConnectorError("too_many_redirects", f"more than {MAX_REDIRECTS} redirects")

    @staticmethod
    def _body(json: Any, data: bytes | str | None, headers: dict[str, str]) -> bytes | None:
        if json is not None:
            if not any(k.lower() == "content-type" for k in headers):
                headers["Content-Type"] = "application/json"
            return jsonlib.dumps(json, separators=(",", ":")).encode()
        return data.encode() if isinstance(data, str) else data

    @staticmethod
    def _redirected(
        method: str, body: bytes | None, headers: dict[str, str], status: int
    ) -> tuple[str, bytes | None, dict[str, str]]:
        # 303 (and 301/302 after a POST, as browsers do) turn into a GET without a body; credentials
        # are never forwarded to wherever a redirect points.
        headers = {k: v for k, v in headers.items() if k.lower() not in ("authorization", "cookie")}
        if status == 303 or (status in (301, 302) and method == "POST"):
            headers = {
                k: v for k, v in headers.items() if k.lower() not in ("content-type", "content-length")
            }
            return "GET", None, headers
        return method, body, headers

    def _send(
        self, method: str, url: str, headers: dict[str, str], body: bytes | None, timeout: float
    ) -> HttpResponse:
        started = time.monotonic()
        try:
            target = check_url(url)
        except UnsafeTarget as exc:
            self._note(method, url, headers, None, b"", started, f"unsafe_target: {exc}")
            raise ConnectorError("unsafe_target", str(exc)) from exc
        try:
            raw = self._pinned(target, method, headers, body, timeout)
            content, truncated = self._read(raw)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            timed_out, what = network_failure(exc, timeout)
            code, message = ("timeout" if timed_out else "network_error"), scrub(what, self.secrets)
            self._note(method, url, headers, None, b"", started, f"{code}: {message}")
            raise ConnectorError(code, message, transient=True) from exc
        response_headers = {k.lower(): v for k, v in raw.headers.items()}
        response = HttpResponse(raw.status, response_headers, content, url, truncated)
        self._note(method, url, headers, raw.status, content, started, "")
        return response

    @staticmethod
    def _pinned(
        target: Target, method: str, headers: dict[str, str], body: bytes | None, timeout: float
    ) -> urllib3.BaseHTTPResponse:
        return pinned_request(target, method, headers, body, timeout)

    @staticmethod
    def _read(raw: urllib3.BaseHTTPResponse) -> tuple[bytes, bool]:
        limit = int(settings.CONNECTOR_MAX_RESPONSE_BYTES)
        try:
            content = raw.read(limit + 1)
        finally:
            raw.release_conn()
        return content[:limit], len(content) > limit

    def _note(
        self, method: str, url: str, headers: Mapping[str, str], status: int | None, content: bytes,
        started: float, error: str,
    ) -> None:  # fmt: skip
        if self.on_exchange is None:
            return
        excerpt = content[: BODY_EXCERPT_CHARS * 4].decode("utf-8", errors="replace")[:BODY_EXCERPT_CHARS]
        self.on_exchange(
            {
                "url": scrub(url, self.secrets), "method": method,
                "headers": redact_headers(headers, self.secrets), "statusCode": status,
                "body": scrub(excerpt, self.secrets), "latencyMs": round((time.monotonic() - started) * 1000),
                "error": scrub(error, self.secrets),
            }
        )  # fmt: skip
