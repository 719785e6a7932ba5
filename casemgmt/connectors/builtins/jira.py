"""Jira Cloud through REST API v3 with basic auth (account email and API token).

Text inputs (description, comment body) are plain text turned into Atlassian Document Format, one
paragraph per blank-line-separated block, since v3 accepts nothing else for rich-text fields.
A transition is named by its id or by its name (or its target status's name), looked up among the
issue's available transitions.

Every request carries `Idempotency-Key: <outbox delivery id>`, the same on each retry of one
delivery, so a retry after a timeout does not create a second issue or comment where Jira (or a
gateway before it) honours the header; Jira Cloud does not document that it does, so the outbox
claim (no attempt while another holds the delivery) stays the guard against sending twice.
"""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import quote

from casemgmt.connectors.base import Action, Connector, ConnectorError, Input, InvocationContext, Result
from casemgmt.connectors.checks import is_email_address, url_problems
from casemgmt.connectors.http import HttpResponse, raise_for_status

ISSUE_KEY = Input("string", required=True, description="Issue key or id (PROJ-123).")


class JiraConnector(Connector):
    key = "jira"
    display_name = "Jira"
    description = "Creates, edits, comments on and transitions Jira Cloud issues through REST API v3."
    requires_auth = True
    config_keys = {
        "baseUrl": Input("string", required=True, description="Site URL, e.g. https://acme.atlassian.net."),
        "email": Input("string", required=True, description="Account email of the API token's owner."),
        "apiToken": Input("string", required=True, description="Atlassian API token."),
    }
    secret_keys = frozenset({"apiToken"})
    actions = {
        "create_issue": Action(
            "create_issue",
            "Create issue",
            {
                "project": Input("string", required=True, description="Project key."),
                "summary": Input("string", required=True),
                "issueType": Input("string", default="Task", description="Issue type name."),
                "description": Input("string", description="Plain text; becomes an Atlassian Document."),
                "labels": Input("array"),
                "fields": Input(
                    "object", description="Further fields, as Jira names them (customfield_10010 ...)."
                ),
            },
        ),
        "update_issue": Action(
            "update_issue",
            "Update issue",
            {
                "issueKey": ISSUE_KEY,
                "summary": Input("string"),
                "description": Input("string"),
                "labels": Input("array"),
                "fields": Input("object"),
            },
        ),
        "add_comment": Action(
            "add_comment", "Add comment", {"issueKey": ISSUE_KEY, "body": Input("string", required=True)}
        ),
        "transition_issue": Action(
            "transition_issue",
            "Transition issue",
            {
                "issueKey": ISSUE_KEY,
                "transition": Input("string", required=True, description="Transition id or name."),
            },
        ),
    }

    def check_config(self, config: dict[str, Any]) -> list[dict[str, str]]:
        problems = url_problems(config, "baseUrl")
        if config.get("email") and not is_email_address(str(config["email"])):
            problems.append({"field": "config.email", "error": "must be an email address"})
        return problems

    def check_inputs(self, action: str, inputs: dict[str, Any]) -> list[dict[str, str]]:
        if action == "update_issue" and not issue_fields(inputs):
            return [
                {"field": "fields", "error": "nothing to update: give summary, description, labels or fields"}
            ]
        return []

    def invoke(
        self, action: str, inputs: dict[str, Any], config: dict[str, Any], context: InvocationContext
    ) -> Result:
        api = JiraApi(config, context)
        if action == "create_issue":
            fields = {"project": {"key": inputs["project"]}, "summary": inputs["summary"]}
            fields |= {"issuetype": {"name": inputs.get("issueType") or "Task"}, **issue_fields(inputs)}
            body = api.send("POST", "issue", {"fields": fields})
            return api.result({"id": body.get("id"), "key": body.get("key"), "self": body.get("self")})
        issue = quote(str(inputs["issueKey"]), safe="")
        if action == "update_issue":
            api.send("PUT", f"issue/{issue}", {"fields": issue_fields(inputs)})
            return api.result({"key": inputs["issueKey"], "updated": True})
        if action == "add_comment":
            body = api.send("POST", f"issue/{issue}/comment", {"body": adf(inputs["body"])})
            return api.result({"id": body.get("id"), "self": body.get("self")})
        transition_id = api.transition_id(issue, str(inputs["transition"]))
        api.send("POST", f"issue/{issue}/transitions", {"transition": {"id": transition_id}})
        return api.result({"key": inputs["issueKey"], "transitionId": transition_id})


def issue_fields(inputs: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = dict(inputs.get("fields") or {})
    if inputs.get("summary"):
        fields["summary"] = inputs["summary"]
    if inputs.get("description"):
        fields["description"] = adf(inputs["description"])
    if inputs.get("labels"):
        fields["labels"] = [str(label) for label in inputs["labels"]]
    return fields


def adf(text: str) -> dict[str, Any]:
    """Plain text as an Atlassian Document: blank lines separate paragraphs, newlines inside a
    paragraph become hard breaks."""
    paragraphs = [p for p in str(text).replace("\r\n", "\n").split("\n\n") if p.strip()] or [""]
    return {"type": "doc", "version": 1, "content": [paragraph(p) for p in paragraphs]}


def paragraph(text: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for index, line in enumerate(text.strip("\n").split("\n")):
        if index:
            content.append({"type": "hardBreak"})
        if line:
            content.append({"type": "text", "text": line})
    return {"type": "paragraph", "content": content}


class JiraApi:
    def __init__(self, config: dict[str, Any], context: InvocationContext) -> None:
        missing = [k for k in ("baseUrl", "email", "apiToken") if not config.get(k)]
        if missing:
            raise ConnectorError("not_configured", f"jira: missing configuration {', '.join(missing)}")
        self.base = str(config["baseUrl"]).rstrip("/") + "/rest/api/3/"
        credentials = base64.b64encode(f"{config['email']}:{config['apiToken']}".encode()).decode()
        self.headers = {
            "Authorization": f"Basic {credentials}",
            "Accept": "application/json",
            "Idempotency-Key": context.idempotency_key,
        }
        self.context = context
        self.last: HttpResponse | None = None

    def send(self, method: str, path: str, payload: Any = None) -> dict[str, Any]:
        response = self.context.http.request(method, self.base + path, headers=self.headers, json=payload)
        self.last = response
        if response.status_code >= 400:
            raise jira_error(response)
        raise_for_status(response, connector="jira")
        body = response.body_value() if response.content else {}
        return body if isinstance(body, dict) else {}

    def transition_id(self, issue: str, wanted: str) -> str:
        if wanted.isdigit():
            return wanted
        listed = self.send("GET", f"issue/{issue}/transitions").get("transitions") or []
        for transition in listed:
            names = (transition.get("name"), (transition.get("to") or {}).get("name"))
            if wanted.casefold() in {str(n).casefold() for n in names if n}:
                return str(transition["id"])
        available = ", ".join(str(t.get("name")) for t in listed)
        raise ConnectorError(
            "invalid_input", f"jira: no transition {wanted!r} on this issue (available: {available})"
        )

    def result(self, output: dict[str, Any]) -> Result:
        response = self.last
        body = response.body_value() if response is not None and response.content else None
        return Result(response.status_code if response else None, body, output=output)


def jira_error(response: HttpResponse) -> ConnectorError:
    """Jira's error body (`errorMessages` and per-field `errors`) in the message; 429 and 5xx are
    worth retrying, any other 4xx (bad fields, auth, unknown issue) is not."""
    body = response.body_value()
    reasons: list[str] = []
    if isinstance(body, dict):
        reasons += [str(m) for m in body.get("errorMessages") or []]
        reasons += [f"{k}: {v}" for k, v in (body.get("errors") or {}).items()]
    elif body:
        reasons.append(str(body)[:200])
    status = response.status_code
    detail = f" ({'; '.join(reasons)})" if reasons else ""
    return ConnectorError(
        "http_error", f"jira: HTTP {status}{detail}", transient=status in (408, 429) or status >= 500,
        status_code=status, body=body,
    )  # fmt: skip


CONNECTOR = JiraConnector()
