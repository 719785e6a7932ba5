"""What both clients share: a transport that sends one request, the JSON client over it, and the
error a non-2xx reply becomes.

The transport is replaceable: the default sends with httpx; the case service sends through its
guarded connector HTTP (SSRF guard, timeouts, secrets scrubbed), so its network errors leave as
its own errors and only HTTP statuses are this module's business."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote, urlencode

import httpx


@dataclass
class Reply:
    status: int
    content: bytes
    content_type: str = ""


class Transport(Protocol):
    def send(self, method: str, url: str, *, headers: dict[str, str], json: Any = None) -> Reply: ...


class ApiError(Exception):
    """A reply that is not a success, or a success that is not JSON (`code` not_json). `body` is
    the error body the service sent (`{error, code, message, details}`) or the reply's text."""

    def __init__(self, status: int, code: str, message: str, body: Any = None) -> None:
        self.status, self.code, self.message, self.body = status, code, message, body
        super().__init__(f"HTTP {status} {code}: {message}" if status else message)

    @property
    def transient(self) -> bool:
        """Whether the same request may succeed later: timeouts, throttling, server errors, a
        garbled reply; not a refusal."""
        return (
            self.code in ("not_json", "unreachable") or self.status in (408, 425, 429) or self.status >= 500
        )

    @property
    def errors(self) -> list[dict[str, str]]:
        details = self.body.get("details") if isinstance(self.body, dict) else None
        return list(details.get("errors") or []) if isinstance(details, dict) else []


class HttpxTransport:
    """The default transport; a failure to connect is an ApiError with status 0, code unreachable."""

    def __init__(self, timeout: float = 30.0) -> None:
        self.client = httpx.Client(timeout=timeout)

    def send(self, method: str, url: str, *, headers: dict[str, str], json: Any = None) -> Reply:
        try:
            response = self.client.request(method, url, headers=headers, json=json)
        except httpx.HTTPError as exc:
            raise ApiError(0, "unreachable", f"{method} {url}: {exc}") from exc
        return Reply(response.status_code, response.content, response.headers.get("content-type", ""))


def path(*parts: str) -> str:
    """Path segments quoted (ids may hold characters a URL reserves)."""
    return "/" + "/".join(quote(str(p), safe="") for p in parts)


def with_query(url_path: str, query: dict[str, Any]) -> str:
    pairs = {
        k: ("true" if v is True else "false" if v is False else v) for k, v in query.items() if v is not None
    }
    return f"{url_path}?{urlencode(pairs)}" if pairs else url_path


@dataclass
class JsonClient:
    base_url: str
    headers: dict[str, str] = field(default_factory=dict)
    transport: Transport = field(default_factory=HttpxTransport)

    def reply(self, method: str, url_path: str, body: Any = None) -> Reply:
        """The raw reply, whatever its status (for callers to whom a status is an answer)."""
        return self.transport.send(
            method, self.base_url.rstrip("/") + url_path, headers=self.headers, json=body
        )

    def call(self, method: str, url_path: str, body: Any = None) -> Any:
        """The reply's JSON, or ApiError."""
        return decoded(self.reply(method, url_path, body))


def decoded(reply: Reply) -> Any:
    try:
        value = json.loads(reply.content) if reply.content else None
    except ValueError:
        value = None
        if reply.status < 400:
            raise ApiError(reply.status, "not_json", "the reply is not JSON") from None
    if reply.status >= 400:
        body = value if value is not None else reply.content.decode("utf-8", errors="replace")[:2000]
        code = body.get("code", "http_error") if isinstance(body, dict) else "http_error"
        message = body.get("message", "") if isinstance(body, dict) else str(body)
        raise ApiError(reply.status, str(code), str(message), body)
    return value
