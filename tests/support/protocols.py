"""Small real servers that speak the outside systems' protocols, for connector tests.

Each is a threaded `http.server` on 127.0.0.1 that checks what the real service checks (the auth
header, the content type, the body's shape), answers what the real service answers (bodies and
status codes), and records every request so a test can assert the exact request that was sent.
`fail_next` scripts the next answers (a 429 with Retry-After, a 503, a Slack `ok: false`) to drive
the connectors' error mapping.
"""

from __future__ import annotations

import base64
import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import default as default_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.support.processes import free_port


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    raw: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.raw)


@dataclass
class Reply:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)

    def encoded(self) -> tuple[bytes, str]:
        if self.body is None:
            return b"", "application/json"
        if isinstance(self.body, str):
            return self.body.encode(), "text/plain; charset=utf-8"
        return json.dumps(self.body).encode(), "application/json; charset=utf-8"


class ProtocolServer:
    """Base: records requests, plays scripted replies first, else routes to `handle`."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.scripted: list[Reply] = []
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ProtocolServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def fail_next(self, status: int, body: Any = None, headers: dict[str, str] | None = None) -> None:
        with self.lock:
            self.scripted.append(Reply(status, body, headers or {}))

    def handle(self, request: Recorded) -> Reply:  # pragma: no cover - each protocol overrides it
        raise NotImplementedError

    def _answer(self, request: Recorded) -> Reply:
        with self.lock:
            self.requests.append(request)
            scripted = self.scripted.pop(0) if self.scripted else None
        return scripted or self.handle(request)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                recorded = Recorded(
                    method=self.command,
                    path=parts.path,
                    query=parse_qs(parts.query),
                    headers={k.lower(): v for k, v in self.headers.items()},
                    raw=raw,
                )
                reply = server._answer(recorded)
                payload, content_type = reply.encoded()
                self.send_response(reply.status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve  # noqa: N815 - http.server names

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base signature
                pass

        return Handler


def json_body(request: Recorded) -> Any:
    """The JSON body, or None when it is not JSON sent as `application/json`."""
    if not request.headers.get("content-type", "").startswith("application/json"):
        return None
    try:
        return json.loads(request.raw)
    except ValueError:
        return None


class SlackServer(ProtocolServer):
    """The Slack Web API methods the connector calls, under `/api/`. Like Slack, most failures are
    HTTP 200 with `{"ok": false, "error": "<code>"}`; rate limits are HTTP 429 with Retry-After."""

    def __init__(self, *, token: str, users: tuple[str, ...] = ("U0123ABCD",)) -> None:
        super().__init__()
        self.token = token
        self.users = set(users)
        self.channels = {"C0PUBLIC01"}
        self.messages: dict[tuple[str, str], str] = {}
        self.clock = itertools.count(1)

    @property
    def api_url(self) -> str:
        return f"{self.base_url}/api"

    def handle(self, request: Recorded) -> Reply:
        if request.method != "POST":
            return Reply(405, "Method Not Allowed")
        if request.headers.get("authorization") != f"Bearer {self.token}":
            return Reply(200, {"ok": False, "error": "invalid_auth"})
        body = json_body(request)
        if not isinstance(body, dict):
            return Reply(200, {"ok": False, "error": "invalid_json"})
        method = request.path.removeprefix("/api/")
        handler = {
            "chat.postMessage": self.post_message,
            "conversations.open": self.open_conversation,
            "chat.update": self.update_message,
        }.get(method)
        if handler is None:
            return Reply(404, {"ok": False, "error": "unknown_method"})
        return handler(body)

    def post_message(self, body: dict[str, Any]) -> Reply:
        channel = body.get("channel")
        if not channel:
            return Reply(200, {"ok": False, "error": "channel_not_found"})
        if channel not in self.channels:
            return Reply(200, {"ok": False, "error": "channel_not_found"})
        if not body.get("text") and not body.get("blocks"):
            return Reply(200, {"ok": False, "error": "no_text"})
        ts = f"1700000000.{next(self.clock):06d}"
        self.messages[(channel, ts)] = body.get("text", "")
        message = {"type": "message", "text": body.get("text", ""), "bot_id": "B0BOT", "ts": ts}
        return Reply(200, {"ok": True, "channel": channel, "ts": ts, "message": message})

    def open_conversation(self, body: dict[str, Any]) -> Reply:
        users = str(body.get("users") or "")
        if not users:
            return Reply(200, {"ok": False, "error": "users_list_not_supplied"})
        if any(user not in self.users for user in users.split(",")):
            return Reply(200, {"ok": False, "error": "user_not_found"})
        channel_id = "D" + users.replace(",", "")[1:]
        self.channels.add(channel_id)
        return Reply(200, {"ok": True, "channel": {"id": channel_id}})

    def update_message(self, body: dict[str, Any]) -> Reply:
        key = (body.get("channel"), body.get("ts"))
        if key not in self.messages:
            return Reply(200, {"ok": False, "error": "message_not_found"})
        self.messages[key] = body.get("text", "")  # type: ignore[index]
        return Reply(200, {"ok": True, "channel": key[0], "ts": key[1], "text": body.get("text", "")})


class TeamsServer(ProtocolServer):
    """A Microsoft Teams incoming webhook: POST JSON to the secret URL; a MessageCard needs `text` or
    `summary`; an Adaptive Card arrives as a `message` with one attachment of the adaptive card
    content type. Success is HTTP 200 with the text `1`; a bad payload is 400 with a reason."""

    PATH = "/webhookb2/3f1c7a52-tenant@team/IncomingWebhook/9c0d4e31secret/owner"

    @property
    def webhook_url(self) -> str:
        return self.base_url + self.PATH

    def handle(self, request: Recorded) -> Reply:
        if request.method != "POST" or request.path != self.PATH:
            return Reply(404, "Webhook not found")
        body = json_body(request)
        if not isinstance(body, dict):
            return Reply(400, "Bad payload received by generic incoming webhook.")
        if body.get("type") == "message":
            return self.adaptive(body)
        if body.get("@type") == "MessageCard" or "text" in body:
            if not body.get("text") and not body.get("summary"):
                return Reply(400, "Summary or Text is required.")
            return Reply(200, "1")
        return Reply(400, "Bad payload received by generic incoming webhook.")

    def adaptive(self, body: dict[str, Any]) -> Reply:
        attachments = body.get("attachments")
        if not isinstance(attachments, list) or len(attachments) != 1:
            return Reply(400, "Bad payload received by generic incoming webhook.")
        attachment = attachments[0]
        content = attachment.get("content") if isinstance(attachment, dict) else None
        if attachment.get("contentType") != "application/vnd.microsoft.card.adaptive":
            return Reply(400, "Bad payload received by generic incoming webhook.")
        if not isinstance(content, dict) or content.get("type") != "AdaptiveCard":
            return Reply(400, "Bad payload received by generic incoming webhook.")
        return Reply(200, "1")


class GoogleChatServer(ProtocolServer):
    """A Google Chat space's incoming webhook: POST `{"text": ...}` to
    `/v1/spaces/{space}/messages?key=..&token=..`; answers the created Message resource, or a
    Google API error body (`{"error": {"code", "message", "status"}}`)."""

    SPACE = "AAAAx1y2z3"

    def __init__(self, *, key: str = "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI", token: str) -> None:
        super().__init__()
        self.key = key
        self.token = token
        self.count = itertools.count(1)
        self.by_request_id: dict[str, dict[str, Any]] = {}

    @property
    def webhook_url(self) -> str:
        return f"{self.base_url}/v1/spaces/{self.SPACE}/messages?key={self.key}&token={self.token}"

    def handle(self, request: Recorded) -> Reply:
        if request.method != "POST" or request.path != f"/v1/spaces/{self.SPACE}/messages":
            return self.error(404, "Requested entity was not found.", "NOT_FOUND")
        if request.query.get("key") != [self.key] or request.query.get("token") != [self.token]:
            return self.error(401, "Request had invalid authentication credentials.", "UNAUTHENTICATED")
        body = json_body(request)
        if not isinstance(body, dict) or not (body.get("text") or body.get("cardsV2")):
            return self.error(400, "Message cannot be empty.", "INVALID_ARGUMENT")
        request_id = (request.query.get("requestId") or [""])[0]
        if request_id in self.by_request_id:
            # Like Google Chat: a repeated request id answers the message it already created.
            return Reply(200, self.by_request_id[request_id])
        number = next(self.count)
        thread_key = (request.query.get("threadKey") or [f"thread{number}"])[0]
        message = {
            "name": f"spaces/{self.SPACE}/messages/msg{number}.msg{number}",
            "sender": {"name": "users/114022495153014004089", "type": "BOT"},
            "text": body.get("text", ""),
            "thread": {"name": f"spaces/{self.SPACE}/threads/{thread_key}"},
            "space": {"name": f"spaces/{self.SPACE}", "type": "ROOM"},
            "createTime": "2026-11-23T10:00:00.000000Z",
        }
        if request_id:
            self.by_request_id[request_id] = message
        return Reply(200, message)

    def error(self, code: int, message: str, status: str) -> Reply:
        return Reply(code, {"error": {"code": code, "message": message, "status": status}})


class JiraServer(ProtocolServer):
    """Jira Cloud REST v3: basic auth of `email:apiToken`; issues under one project; description and
    comments in Atlassian Document Format; transitions listed and applied by id."""

    TRANSITIONS = [
        {"id": "11", "name": "To Do", "to": {"id": "10000", "name": "To Do"}},
        {"id": "21", "name": "In Progress", "to": {"id": "3", "name": "In Progress"}},
        {"id": "31", "name": "Done", "to": {"id": "10001", "name": "Done"}},
    ]

    def __init__(self, *, email: str, api_token: str, project: str = "OPS") -> None:
        super().__init__()
        self.expected_auth = "Basic " + base64.b64encode(f"{email}:{api_token}".encode()).decode()
        self.project = project
        self.issues: dict[str, dict[str, Any]] = {}
        self.numbers = itertools.count(1)

    def handle(self, request: Recorded) -> Reply:
        if request.headers.get("authorization") != self.expected_auth:
            return Reply(401, "Client must be authenticated to access this resource.")
        parts = request.path.removeprefix("/rest/api/3/").split("/")
        if request.path == "/rest/api/3/issue" and request.method == "POST":
            return self.create(request)
        if len(parts) < 2 or parts[0] != "issue":
            return Reply(404, {"errorMessages": ["Not found"], "errors": {}})
        key = parts[1]
        if key not in self.issues:
            return Reply(404, self.errors(["Issue does not exist or you do not have permission to see it."]))
        route: dict[tuple[str, str], Callable[[Recorded, str], Reply]] = {
            ("PUT", ""): self.edit,
            ("POST", "comment"): self.comment,
            ("GET", "transitions"): self.list_transitions,
            ("POST", "transitions"): self.transition,
        }
        handler = route.get((request.method, "/".join(parts[2:])))
        if handler is None:
            return Reply(405, self.errors(["Method not allowed"]))
        return handler(request, key)

    def errors(self, messages: list[str], fields: dict[str, str] | None = None) -> dict[str, Any]:
        return {"errorMessages": messages, "errors": fields or {}}

    def body_of(self, request: Recorded) -> dict[str, Any] | None:
        body = json_body(request)
        return body if isinstance(body, dict) else None

    def create(self, request: Recorded) -> Reply:
        body = self.body_of(request)
        fields = (body or {}).get("fields")
        if not isinstance(fields, dict):
            return Reply(400, self.errors(["Request body is not valid JSON with fields."]))
        problems = {}
        if (fields.get("project") or {}).get("key") != self.project:
            problems["project"] = "Specify a valid project ID or key"
        if not fields.get("summary"):
            problems["summary"] = "You must specify a summary of the issue."
        if not (fields.get("issuetype") or {}).get("name"):
            problems["issuetype"] = "Specify an issue type"
        if "description" in fields and not is_adf(fields["description"]):
            problems["description"] = (
                "Operation value must be an Atlassian Document (see the Atlassian Document Format)"
            )
        if problems:
            return Reply(400, self.errors([], problems))
        number = next(self.numbers)
        key = f"{self.project}-{number}"
        self.issues[key] = {"fields": fields, "comments": [], "status": "To Do"}
        return Reply(
            201,
            {
                "id": str(10000 + number),
                "key": key,
                "self": f"{self.base_url}/rest/api/3/issue/{10000 + number}",
            },
        )

    def edit(self, request: Recorded, key: str) -> Reply:
        body = self.body_of(request)
        fields = (body or {}).get("fields")
        if not isinstance(fields, dict) or not fields:
            return Reply(400, self.errors(["No fields to update."]))
        if "description" in fields and not is_adf(fields["description"]):
            return Reply(
                400, self.errors([], {"description": "Operation value must be an Atlassian Document"})
            )
        self.issues[key]["fields"].update(fields)
        return Reply(204)

    def comment(self, request: Recorded, key: str) -> Reply:
        body = self.body_of(request)
        if not body or not is_adf(body.get("body")):
            return Reply(400, self.errors([], {"comment": "Comment body can not be empty!"}))
        self.issues[key]["comments"].append(body["body"])
        comment_id = str(10000 + len(self.issues[key]["comments"]))
        return Reply(
            201,
            {
                "id": comment_id,
                "self": f"{self.base_url}/rest/api/3/issue/{key}/comment/{comment_id}",
                "body": body["body"],
                "created": "2026-11-23T10:00:00.000+0000",
            },
        )

    def list_transitions(self, request: Recorded, key: str) -> Reply:
        return Reply(200, {"expand": "transitions", "transitions": self.TRANSITIONS})

    def transition(self, request: Recorded, key: str) -> Reply:
        body = self.body_of(request)
        chosen = ((body or {}).get("transition") or {}).get("id")
        match = next((t for t in self.TRANSITIONS if t["id"] == chosen), None)
        if match is None:
            return Reply(400, self.errors([f"Transition id '{chosen}' is not valid for this issue."]))
        self.issues[key]["status"] = match["to"]["name"]
        return Reply(204)


def is_adf(value: Any) -> bool:
    """An Atlassian Document: a `doc` node of version 1 whose content is a list of nodes."""
    return (
        isinstance(value, dict)
        and value.get("type") == "doc"
        and value.get("version") == 1
        and isinstance(value.get("content"), list)
    )


class SmtpSink:
    """An aiosmtpd server on 127.0.0.1 that keeps every message it is given, parsed; with
    a username it accepts only AUTH PLAIN with the given username and password."""

    def __init__(self, *, username: str | None = None, password: str | None = None) -> None:
        # aiosmtpd is a test dependency only.
        from aiosmtpd.controller import Controller
        from aiosmtpd.smtp import AuthResult

        self.messages: list[tuple[list[str], EmailMessage]] = []
        sink = self

        class Handler:
            async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
                parsed = BytesParser(policy=default_policy).parsebytes(envelope.original_content)
                sink.messages.append((list(envelope.rcpt_tos), parsed))  # type: ignore[arg-type]
                return "250 Message accepted for delivery"

        def authenticator(server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any) -> Any:
            ok = auth_data.login.decode() == username and auth_data.password.decode() == password
            return AuthResult(success=ok, handled=False)

        options: dict[str, Any] = {}
        if username is not None:
            options = {"authenticator": authenticator, "auth_require_tls": False, "auth_required": True}
            # One mechanism, so a refused login is one 535 (smtplib would otherwise try LOGIN next).
            options["auth_exclude_mechanism"] = ["LOGIN"]
        self.port = free_port()
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port, **options)

    def start(self) -> SmtpSink:
        self.controller.start()
        return self

    def stop(self) -> None:
        self.controller.stop()
