"""Google Chat through a space's incoming webhook (`.../v1/spaces/{space}/messages?key=..&token=..`).

The webhook URL is the credential. A `threadKey` input posts into (or starts) that thread. The
idempotency key goes out as `requestId`: Google Chat answers a repeated request id with the
message it already created, so a redelivered step never posts twice.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode, urlsplit

from casemgmt.connectors.base import Action, Connector, ConnectorError, Input, InvocationContext, Result
from casemgmt.connectors.checks import url_problems
from casemgmt.connectors.http import raise_for_status


class GoogleChatConnector(Connector):
    key = "google_chat"
    display_name = "Google Chat"
    description = "Posts messages to a Google Chat space through its incoming webhook."
    requires_auth = True
    config_keys = {
        "webhookUrl": Input("string", required=True, description="The space's incoming webhook URL.")
    }
    actions = {
        "send_message": Action(
            "send_message",
            "Send message",
            {
                "text": Input("string", required=True, description="Message text (Google Chat formatting)."),
                "threadKey": Input("string", description="Post into this thread, starting it when new."),
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
            raise ConnectorError("not_configured", "google_chat: no webhook URL configured")
        extra = {"requestId": request_id(context.idempotency_key)}
        if inputs.get("threadKey"):
            extra |= {
                "threadKey": inputs["threadKey"],
                "messageReplyOption": "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD",
            }
        response = context.http.request(
            "POST", with_query(url, extra), headers={"Content-Type": "application/json; charset=UTF-8"},
            json={"text": inputs["text"]},
        )  # fmt: skip
        raise_for_status(response, connector="google_chat")
        body = response.body_value()
        message = body if isinstance(body, dict) else {}
        output = {
            "ok": True,
            "name": message.get("name"),
            "thread": (message.get("thread") or {}).get("name"),
        }
        return Result(response.status_code, body, output=output)


def request_id(idempotency_key: str) -> str:
    # Google accepts letters, digits and hyphens in request ids, up to 64 characters.
    return "".join(c if c.isalnum() or c == "-" else "-" for c in idempotency_key)[:64]


def with_query(url: str, extra: dict[str, str]) -> str:
    """Appends to the URL as written, so the configured URL stays a prefix of the one sent and is
    still recognised (and scrubbed) as the secret it is in the invocation log."""
    base, _, fragment = url.partition("#")
    separator = "&" if urlsplit(base).query else ("" if base.endswith("?") else "?")
    return base + separator + urlencode(extra) + (f"#{fragment}" if fragment else "")


CONNECTOR = GoogleChatConnector()
