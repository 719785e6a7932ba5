"""Calls to the tenant's orchestrator, through the connectors' guarded HTTP client (SSRF guard,
timeouts, secrets scrubbed from errors). Every function raises ConnectorError; `transient` says
whether trying again later may help."""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import quote

from django.conf import settings

from casemgmt.connectors.base import ConnectorError
from casemgmt.connectors.http import GuardedHttp, HttpResponse, raise_for_status

CALLBACK_EVENTS = ["dag.completed", "dag.failed", "dag.cancelled"]
TERMINAL = ("completed", "failed", "cancelled")


def callback_url(config: dict[str, Any], tenant_id: Any) -> str:
    base = settings.PUBLIC_BASE_URL.rstrip("/")
    return config.get("callbackUrl") or f"{base}/webhooks/orchestrator/{tenant_id}"


def _call(config: dict[str, Any], method: str, path: str, body: Any = None) -> HttpResponse:
    http = GuardedHttp(secrets=(config["apiKey"], config["webhookSecret"]))
    url = config["url"].rstrip("/") + path
    return http.request(method, url, headers={"X-API-Key": config["apiKey"]}, json=body)


def _json(response: HttpResponse) -> Any:
    raise_for_status(response, connector="orchestrator")
    try:
        return response.json()
    except ValueError as exc:
        raise ConnectorError("remote_error", "orchestrator: reply is not JSON", transient=True) from exc


def webhook_ensure(config: dict[str, Any], tenant_id: Any) -> str:
    """The orchestrator webhook that calls this tenant back, registered once. Its name carries a
    hash of the URL and secret: a changed secret or URL registers a new one (the secret is
    write-only on the orchestrator, so an old registration cannot be checked or updated)."""
    url = callback_url(config, tenant_id)
    digest = hashlib.sha256(f"{url}\n{config['webhookSecret']}".encode()).hexdigest()[:16]
    name = f"case-service-{tenant_id}-{digest}"
    listed = _json(_call(config, "GET", "/api/webhooks?limit=500"))
    for webhook in listed.get("webhooks", []):
        if webhook.get("name") == name:
            return str(webhook["id"])
    body = {"name": name, "url": url, "events": CALLBACK_EVENTS, "secret": config["webhookSecret"]}
    return str(_json(_call(config, "POST", "/api/webhooks", body))["id"])


def run_schedule(config: dict[str, Any], *, step: dict[str, Any], run_id: str, parameters: dict) -> None:
    """Schedules the step's DAG (or single task) as run `run_id`. A 409 means that run exists
    already (an earlier attempt got through before its reply was lost): nothing more to do."""
    body: dict[str, Any] = {"run_id": run_id, "parameters": parameters}
    if step.get("dagId"):
        path, body["dag_id"] = "/api/schedule-dag", step["dagId"]
    else:
        path, body["task_id"] = "/api/schedule-task", step["taskId"]
    response = _call(config, "POST", path, body)
    if response.status_code != 409:
        _json(response)


def run_get(config: dict[str, Any], run_id: str) -> dict[str, Any]:
    """The run with its task runs: {status, tasks: [{task_id, status, ...}]}."""
    return _json(_call(config, "GET", f"/api/runs/{quote(run_id, safe='')}?include_tasks=true"))


def run_cancel(config: dict[str, Any], run_id: str) -> None:
    response = _call(config, "POST", f"/api/cancel-run/{quote(run_id, safe='')}")
    if response.status_code not in (404, 409):  # gone or already finished: nothing to cancel
        _json(response)
