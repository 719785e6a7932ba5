"""Slack through the Web API with a bot token: post to a channel, to a person (a direct message
opened with conversations.open), or edit a message the bot posted.

Slack answers most failures with HTTP 200 and `{"ok": false, "error": "<code>"}`; the code decides
whether trying again can help. Rate limits come as HTTP 429 with Retry-After.

Every call carries `Idempotency-Key: <outbox delivery id>`, the same on each retry. The Web API
documents no idempotency for chat.postMessage, so the duplicate guard is ours: the outbox claims a
delivery before each attempt, so a redelivered or duplicated message never sends; only an attempt
whose answer was lost (a timeout after Slack posted) can post again, with the same key for any
proxy or gateway in between that honours it.
"""

from __future__ import annotations

from typing import Any

from casemgmt.connectors.base import Action, Connector, ConnectorError, Input, InvocationContext, Result
from casemgmt.connectors.checks import url_problems
from casemgmt.connectors.http import HttpResponse, raise_for_status

DEFAULT_API_URL = "https://slack.com/api"
# Codes Slack documents as temporary conditions on its side; every other code (invalid_auth,
# channel_not_found, not_in_channel, missing_scope, msg_too_long ...) fails the same way again.
TRANSIENT_CODES = frozenset(
    {"ratelimited", "rate_limited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"}
)
MESSAGE_INPUTS = {
    "text": Input("string", description="Message text (mrkdwn); the fallback text when blocks are given."),
    "blocks": Input("array", description="Block Kit blocks."),
}


class SlackConnector(Connector):
    key = "slack"
    display_name = "Slack"
    description = "Posts, direct-messages and updates Slack messages through the Web API with a bot token."
    requires_auth = True
    config_keys = {
        "token": Input("string", required=True, description="Bot token (xoxb-...)."),
        "apiUrl": Input("string", default=DEFAULT_API_URL, description="Web API base URL."),
    }
    actions = {
        "send_message": Action(
            "send_message",
            "Send message",
            {
                "channel": Input("string", required=True, description="Channel ID or name."),
                **MESSAGE_INPUTS,
                "thread_ts": Input("string", description="Reply in the thread of this message."),
            },
        ),
        "send_dm": Action(
            "send_dm",
            "Send direct message",
            {"user": Input("string", required=True, description="Slack user ID (U...)."), **MESSAGE_INPUTS},
        ),
        "update_message": Action(
            "update_message",
            "Update message",
            {
                "channel": Input("string", required=True),
                "ts": Input("string", required=True, description="Timestamp of the message to edit."),
                **MESSAGE_INPUTS,
            },
        ),
    }

    def check_config(self, config: dict[str, Any]) -> list[dict[str, str]]:
        return url_problems(config, "apiUrl")

    def check_inputs(self, action: str, inputs: dict[str, Any]) -> list[dict[str, str]]:
        if not inputs.get("text") and not inputs.get("blocks"):
            return [{"field": "text", "error": "text or blocks is required"}]
        return []

    def invoke(
        self, action: str, inputs: dict[str, Any], config: dict[str, Any], context: InvocationContext
    ) -> Result:
        api = SlackApi(config, context)
        message = {k: inputs[k] for k in ("text", "blocks") if inputs.get(k)}
        if action == "send_dm":
            opened = api.call("conversations.open", {"users": inputs["user"]})
            channel = opened["channel"]["id"]
            return api.result(api.call("chat.postMessage", {"channel": channel, **message}))
        if action == "update_message":
            payload = {"channel": inputs["channel"], "ts": inputs["ts"], **message}
            return api.result(api.call("chat.update", payload))
        payload = {"channel": inputs["channel"], **message}
        if inputs.get("thread_ts"):
            payload["thread_ts"] = inputs["thread_ts"]
        return api.result(api.call("chat.postMessage", payload))


class SlackApi:
    def __init__(self, config: dict[str, Any], context: InvocationContext) -> None:
        self.base = str(config.get("apiUrl") or DEFAULT_API_URL).rstrip("/")
        self.token = config.get("token") or ""
        self.context = context
        self.last: HttpResponse | None = None

    def call(self, method: str, payload: dict[str, Any]) -> dict[str, Any]:
        if not self.token:
            raise ConnectorError("not_configured", "slack: no bot token configured")
        response = self.context.http.request(
            "POST",
            f"{self.base}/{method}",
            headers={
                "Authorization": f"Bearer {self.token}",
                "Content-Type": "application/json; charset=utf-8",
                "Idempotency-Key": self.context.idempotency_key,
            },
            json=payload,
        )
        self.last = response
        raise_for_status(response, connector="slack")
        body = response.body_value()
        if not isinstance(body, dict):
            raise ConnectorError(
                "remote_error", f"slack: {method} answered a non-JSON body",
                transient=False, status_code=response.status_code, body=body,
            )  # fmt: skip
        if not body.get("ok"):
            code = str(body.get("error") or "unknown_error")
            raise ConnectorError(
                "remote_error", f"slack: {method} failed: {code}",
                transient=code in TRANSIENT_CODES, status_code=response.status_code, body=body,
            )  # fmt: skip
        return body

    def result(self, body: dict[str, Any]) -> Result:
        status = self.last.status_code if self.last else 200
        return Result(status, body, output={"ok": True, "channel": body.get("channel"), "ts": body.get("ts")})


CONNECTOR = SlackConnector()
