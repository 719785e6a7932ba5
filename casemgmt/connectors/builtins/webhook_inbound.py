"""`webhook_inbound`: outside systems POST to a tenant's inbound webhooks to open or update cases.

Listed so that `GET /connectors` shows what the service can receive; its one action, `receive`,
is performed by the public receiver (`casemgmt.webhooks`), never by a workflow step. Inbound
webhooks are configured under `/admin/webhooks/inbound`, not through `/connectors/{key}/config`.
"""

from __future__ import annotations

from typing import Any

from casemgmt.connectors.base import Action, Connector, ConnectorError, Input, InvocationContext, Result


class InboundWebhookConnector(Connector):
    key = "webhook_inbound"
    display_name = "Inbound webhook"
    description = (
        "Receives POST /webhooks/<tenant>/<path> (key, optional HMAC signature) and creates a case "
        "or merges into the case the payload names. Configured under /admin/webhooks/inbound."
    )
    invocable = False
    actions = {
        "receive": Action(
            "receive",
            "Receive",
            {"payload": Input("any", description="the delivery's JSON or form body")},
        )
    }

    def invoke(
        self, action: str, inputs: dict[str, Any], config: dict[str, Any], context: InvocationContext
    ) -> Result:
        raise ConnectorError("invalid_input", "webhook_inbound receives deliveries; a step cannot call it")


CONNECTOR = InboundWebhookConnector()
