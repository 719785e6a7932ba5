"""The OpenAI-compatible chat-completions client used by agent steps.

Errors are sorted by what a caller should do: `LLMNotConfigured` (the agent step fails with `not_configured`),
`LLMTransient` (timeouts, connection errors, 429 and 5xx: retry with backoff) and `LLMBadReply`
(anything else: retrying will not help).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
from django.conf import settings


class LLMError(Exception):
    pass


class LLMNotConfigured(LLMError):
    pass


class LLMTransient(LLMError):
    pass


class LLMBadReply(LLMError):
    pass


@dataclass(frozen=True)
class Reply:
    content: str
    model: str
    usage: dict[str, Any]


def llm_configured() -> bool:
    return bool(settings.LLM_BASE_URL and settings.LLM_MODEL)


def chat_completion(
    *,
    messages: list[dict[str, str]],
    model: str | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    json_mode: bool = False,
) -> Reply:
    if not settings.LLM_BASE_URL or not (model or settings.LLM_MODEL):
        raise LLMNotConfigured("No language model is configured (CASE_LLM_BASE_URL, CASE_LLM_MODEL).")
    body: dict[str, Any] = {"model": model or settings.LLM_MODEL, "messages": messages}
    if temperature is not None:
        body["temperature"] = temperature
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if json_mode:
        body["response_format"] = {"type": "json_object"}
    headers = {"Authorization": f"Bearer {settings.LLM_API_KEY}"} if settings.LLM_API_KEY else {}
    url = settings.LLM_BASE_URL.rstrip("/") + "/chat/completions"
    try:
        response = httpx.post(url, json=body, headers=headers, timeout=settings.LLM_TIMEOUT_SECONDS)
    except httpx.TimeoutException as exc:
        raise LLMTransient(f"language model timed out after {settings.LLM_TIMEOUT_SECONDS}s") from exc
    except httpx.HTTPError as exc:
        raise LLMTransient(f"language model unreachable: {exc.__class__.__name__}: {exc}") from exc
    return _reply(response)


def _reply(response: httpx.Response) -> Reply:
    if response.status_code == 429 or response.status_code >= 500:
        raise LLMTransient(f"language model answered HTTP {response.status_code}")
    if response.status_code >= 400:
        raise LLMBadReply(
            f"language model refused the request: HTTP {response.status_code}: {response.text[:200]}"
        )
    try:
        payload = response.json()
        content = payload["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise LLMBadReply(f"malformed chat-completions reply: {response.text[:200]!r}") from None
    if not isinstance(content, str):
        raise LLMBadReply("malformed chat-completions reply: message content is not text")
    return Reply(content=content, model=str(payload.get("model") or ""), usage=payload.get("usage") or {})
