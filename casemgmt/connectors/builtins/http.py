"""`http`: one HTTP request to any public URL (or an allow-listed one)."""

from __future__ import annotations

from typing import Any

from casemgmt.connectors.base import Action, Connector, ConnectorError, Input, InvocationContext, Result
from casemgmt.connectors.http import raise_for_status

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


class HttpConnector(Connector):
    key = "http"
    display_name = "HTTP request"
    description = "Calls any HTTP endpoint with a method, headers and a body."
    # Tenant-wide defaults merged under each request's own headers (e.g. an Authorization header).
    config_keys = {"headers": Input("object", description="headers sent with every request")}
    actions = {
        "request": Action(
            "request",
            "HTTP request",
            {
                "method": Input("string", required=True, enum=METHODS),
                "url": Input("string", required=True),
                "headers": Input("object"),
                "body": Input("any"),
                "timeout": Input("number", description="seconds (capped by the server's maximum)"),
            },
        )
    }

    def check_inputs(self, action: str, inputs: dict[str, Any]) -> list[dict[str, str]]:
        timeout = inputs.get("timeout")
        if timeout is not None and not (0 < float(timeout) <= 300):
            return [{"field": "timeout", "error": "must be more than 0 and at most 300 seconds"}]
        return []

    def invoke(
        self, action: str, inputs: dict[str, Any], config: dict[str, Any], context: InvocationContext
    ) -> Result:
        headers = {**(config.get("headers") or {}), **(inputs.get("headers") or {})}
        headers.setdefault("Idempotency-Key", context.idempotency_key)
        body = inputs.get("body")
        send: dict[str, Any] = {"data": body} if isinstance(body, str) else {"json": body}
        response = context.http.request(
            inputs["method"], inputs["url"], headers={k: str(v) for k, v in headers.items()},
            timeout=inputs.get("timeout"), **send,
        )  # fmt: skip
        raise_for_status(response, connector=self.key)
        if response.status_code >= 300:
            raise ConnectorError("http_error", f"http: unfollowed redirect ({response.status_code})",
                                 status_code=response.status_code)  # fmt: skip
        return Result(status_code=response.status_code, body=response.body_value())


CONNECTOR = HttpConnector()
