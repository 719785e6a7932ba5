"""Microsoft Teams through a channel's incoming webhook: a MessageCard for plain messages, an
Adaptive Card as the single attachment of a `message` for rich ones.

The webhook URL is the credential. Teams answers 200 with the text `1` (newer workflow webhooks
202); the older connector endpoints also answer 200 with a text naming an HTTP error when Teams
itself was throttled, which is read as that error.
"""

from __future__ import annotations

import re
from typing import Any

from casemgmt.connectors.base import Action, Connector, ConnectorError, Input, InvocationContext, Result
from casemgmt.connectors.checks import url_problems
from casemgmt.connectors.http import raise_for_status

ADAPTIVE_CARD_TYPE = "application/vnd.microsoft.card.adaptive"
ADAPTIVE_CARD_SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
EMBEDDED_ERROR = re.compile(r"returned HTTP error (\d{3})")


class TeamsConnector(Connector):
    key = "teams"
    display_name = "Microsoft Teams"
    description = "Posts messages and Adaptive Cards to a Teams channel through its incoming webhook."
    requires_auth = True
    config_keys = {
        "webhookUrl": Input("string", required=True, description="The channel's incoming webhook URL.")
    }
    actions = {
        "send_message": Action(
            "send_message",
            "Send message",
            {
                "text": Input("string", required=True, description="Message text (Markdown)."),
                "title": Input("string"),
                "summary": Input("string", description="Notification text; defaults to the title or text."),
                "themeColor": Input("string", description="Accent colour, hex without #."),
            },
        ),
        "send_adaptive_card": Action(
            "send_adaptive_card",
            "Send Adaptive Card",
            {
                "card": Input(
                    "object", required=True, description="The AdaptiveCard (its body, actions, version)."
                ),
            },
        ),
    }

    def check_config(self, config: dict[str, Any]) -> list[dict[str, str]]:
        return url_problems(config, "webhookUrl")

    def invoke(
        self, action: str, inputs: dict[str, Any], config: dict[str, Any], context: InvocationContext
    ) -> Result:
        url = config.get("webhookUrl")
        if not url:
            raise ConnectorError("not_configured", "teams: no webhook URL configured")
        payload = adaptive_card(inputs["card"]) if action == "send_adaptive_card" else message_card(inputs)
        response = context.http.request("POST", url, json=payload)
        raise_for_status(response, connector="teams")
        embedded = EMBEDDED_ERROR.search(response.text)
        if embedded:
            status = int(embedded.group(1))
            raise ConnectorError(
                "http_error", f"teams: HTTP {status}", transient=status == 429 or status >= 500,
                status_code=status, body=response.text,
            )  # fmt: skip
        return Result(response.status_code, response.body_value(), output={"ok": True})


def message_card(inputs: dict[str, Any]) -> dict[str, Any]:
    card: dict[str, Any] = {
        "@type": "MessageCard",
        "@context": "https://schema.org/extensions",
        "summary": inputs.get("summary") or inputs.get("title") or inputs["text"][:80],
        "text": inputs["text"],
    }
    if inputs.get("title"):
        card["title"] = inputs["title"]
    if inputs.get("themeColor"):
        card["themeColor"] = inputs["themeColor"]
    return card


def adaptive_card(card: dict[str, Any]) -> dict[str, Any]:
    content = {"$schema": ADAPTIVE_CARD_SCHEMA, "type": "AdaptiveCard", "version": "1.4", **card}
    return {
        "type": "message",
        "attachments": [{"contentType": ADAPTIVE_CARD_TYPE, "contentUrl": None, "content": content}],
    }


CONNECTOR = TeamsConnector()
