"""`webhook`: outbound JSON of the case (data and step results) to a receiver, HMAC-signed.

The body is fixed when the call is queued (the case as it was at that event), so every retry
sends the same bytes. Headers:
- `X-Webhook-Signature: sha256=<hex>`: HMAC-SHA256 of the raw body with the configured `secret`
  (absent when no secret is configured);
- `X-Webhook-Id` and `Idempotency-Key`: the delivery id, the same on every retry, for the
  receiver to drop duplicates;
- `X-Webhook-Event`: the event name.
"""

from __future__ import annotations

import json
from typing import Any

from casemgmt.connectors.base import Action, Connector, ConnectorError, Input, InvocationContext, Result
from casemgmt.connectors.http import raise_for_status
from shared import signing


def signature(secret: str, body: bytes) -> str:
    return signing.sha256_sign(secret, body)


class WebhookConnector(Connector):
    key = "webhook"
    display_name = "Outbound webhook"
    description = "Sends the case data and step results as signed JSON to a URL, with retries."
    config_keys = {
        "webhookUrl": Input("string", description="default receiver URL"),
        "secret": Input("string", description="HMAC-SHA256 signing secret"),
        # Case events sent to webhookUrl as they happen (besides any webhook step of a workflow).
        "events": Input("array", description="case:created, case:updated, case:closed, case:cancelled"),
    }
    actions = {
        "send": Action(
            "send",
            "Send",
            {
                "url": Input("string", description="receiver URL (default: the configured webhookUrl)"),
                "event": Input("string", default="case.step"),
                "payload": Input("object", description="extra fields sent under `data`"),
                "headers": Input("object"),
            },
        )
    }

    def check_config(self, config: dict[str, Any]) -> list[dict[str, str]]:
        events = config.get("events") or []
        known = ("case:created", "case:updated", "case:closed", "case:cancelled")
        if any(event not in known for event in events):
            return [{"field": "config.events", "error": f"must list events among: {', '.join(known)}"}]
        if events and not config.get("webhookUrl"):
            return [{"field": "config.webhookUrl", "error": "is required to send case events"}]
        return []

    def prepare(self, action: str, inputs: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        envelope = {
            "event": inputs.get("event") or "case.step",
            "caseId": str(context.get("case_id")) if context.get("case_id") else None,
            "caseNumber": context.get("case_number") or None,
            "caseData": context.get("case_data") or {},
            "stepResults": context.get("step_results") or {},
            "data": inputs.get("payload"),
            "occurredAt": context.get("now"),
        }
        return {**inputs, "envelope": envelope}

    def invoke(
        self, action: str, inputs: dict[str, Any], config: dict[str, Any], context: InvocationContext
    ) -> Result:
        url = inputs.get("url") or config.get("webhookUrl")
        if not url:
            raise ConnectorError("not_configured", "webhook: no url given and no webhookUrl configured")
        envelope = dict(inputs.get("envelope") or {})
        body = json.dumps(envelope, sort_keys=True, separators=(",", ":")).encode()
        headers = {str(k): str(v) for k, v in (inputs.get("headers") or {}).items()}
        headers.update(
            {
                "Content-Type": "application/json",
                "X-Webhook-Id": context.idempotency_key,
                "Idempotency-Key": context.idempotency_key,
                "X-Webhook-Event": str(envelope.get("event") or "case.step"),
            }
        )
        if config.get("secret"):
            headers["X-Webhook-Signature"] = signature(config["secret"], body)
        response = context.http.request("POST", url, headers=headers, data=body)
        raise_for_status(response, connector=self.key)
        if response.status_code >= 300:
            raise ConnectorError("http_error", f"webhook: unfollowed redirect ({response.status_code})",
                                 status_code=response.status_code)  # fmt: skip
        return Result(status_code=response.status_code, body=response.body_value())


CONNECTOR = WebhookConnector()
