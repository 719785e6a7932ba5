"""Calls to the tenant's orchestrator: the shared orchestrator client (`shared.client`) sending
through the connectors' guarded HTTP client (SSRF guard, timeouts, secrets scrubbed from errors).
Every function raises ConnectorError; `transient` says whether trying again later may help."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings

from casemgmt.connectors.base import ConnectorError
from casemgmt.connectors.http import GuardedHttp
from shared.client.base import ApiError, Reply
from shared.client.orchestrator import OrchestratorClient, Run

CALLBACK_EVENTS = ["dag.completed", "dag.failed", "dag.cancelled"]
TERMINAL = ("completed", "failed", "cancelled")
T = TypeVar("T")


class GuardedTransport:
    """The shared client's transport over GuardedHttp: its network errors stay ConnectorErrors."""

    def __init__(self, secrets: tuple[str, ...]) -> None:
        self.http = GuardedHttp(secrets=secrets)

    def send(self, method: str, url: str, *, headers: dict[str, str], json: Any = None) -> Reply:
        response = self.http.request(method, url, headers=headers, json=json)
        return Reply(response.status_code, response.content, response.headers.get("content-type", ""))


def _client(config: dict[str, Any]) -> OrchestratorClient:
    transport = GuardedTransport((config["apiKey"], config["webhookSecret"]))
    return OrchestratorClient(config["url"], config["apiKey"], transport=transport)


def _call(action: Callable[[], T], *, ignore: tuple[int, ...] = ()) -> T | None:
    """The action's result; an HTTP status in `ignore` is None (an answer, not an error)."""
    try:
        return action()
    except ApiError as exc:
        if exc.status in ignore:
            return None
        if exc.code == "not_json":
            raise ConnectorError("remote_error", "orchestrator: reply is not JSON", transient=True) from exc
        raise ConnectorError(
            "http_error", f"orchestrator: HTTP {exc.status}", transient=exc.transient, status_code=exc.status,
            body=exc.body,
        ) from exc  # fmt: skip


def callback_url(config: dict[str, Any], tenant_id: Any) -> str:
    base = settings.PUBLIC_BASE_URL.rstrip("/")
    return config.get("callbackUrl") or f"{base}/webhooks/orchestrator/{tenant_id}"


def webhook_ensure(config: dict[str, Any], tenant_id: Any) -> str:
    """The orchestrator webhook that calls this tenant back, registered once. Its name carries a
    hash of the URL and secret: a changed secret or URL registers a new one (the secret is
    write-only on the orchestrator, so an old registration cannot be checked or updated)."""
    url = callback_url(config, tenant_id)
    digest = hashlib.sha256(f"{url}\n{config['webhookSecret']}".encode()).hexdigest()[:16]
    name = f"case-service-{tenant_id}-{digest}"
    client = _client(config)
    for webhook in _call(client.webhooks_list) or []:
        if webhook.get("name") == name:
            return str(webhook["id"])
    created = _call(
        lambda: client.webhook_create(
            name=name, url=url, events=CALLBACK_EVENTS, secret=config["webhookSecret"]
        )
    )
    return str((created or {})["id"])


def run_schedule(config: dict[str, Any], *, step: dict[str, Any], run_id: str, parameters: dict) -> None:
    """Schedules the step's DAG (or single task) as run `run_id`. A 409 means that run exists
    already (an earlier attempt got through before its reply was lost): nothing more to do."""
    target, target_id = ("dag", step["dagId"]) if step.get("dagId") else ("task", step["taskId"])
    client = _client(config)
    _call(lambda: client.schedule(target, target_id, run_id=run_id, parameters=parameters), ignore=(409,))


def run_get(config: dict[str, Any], run_id: str) -> dict[str, Any]:
    """The run with its task runs: {status, tasks: [{task_id, status, ...}]}."""
    client = _client(config)
    run: Run | None = _call(lambda: client.run_get(run_id, include_tasks=True))
    return dict(run or {})


def run_cancel(config: dict[str, Any], run_id: str) -> None:
    client = _client(config)
    _call(lambda: client.run_cancel(run_id), ignore=(404, 409))  # gone or already finished
