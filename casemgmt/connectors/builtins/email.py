"""Email over SMTP through Django's email backend, with the tenant's own server settings.

The connection is built per invocation with `get_connection` from the tenant configuration (host,
port, username, password, use_tls or use_ssl, from). The SMTP host goes through the same address check as
every outbound URL. Each message carries a Message-ID made from the step's idempotency key, so a
resend after a lost acknowledgement is recognisable as the same message by the receiving side.

SMTP replies map to retries like HTTP ones: a 4xx reply, a refused or dropped connection or a
timeout is temporary; a 5xx reply (bad credentials, refused recipients) is not.
"""

from __future__ import annotations

import smtplib
import socket
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives, get_connection
from django.core.mail.backends.smtp import EmailBackend

from casemgmt.connectors.base import Action, Connector, ConnectorError, Input, InvocationContext, Result
from casemgmt.connectors.checks import is_email_address
from casemgmt.connectors.guard import METADATA_ADDRESSES, UnsafeTarget, host_allowed, refusal, resolve

SMTP_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
MESSAGE_INPUTS = {
    "subject": Input("string", required=True),
    "body": Input("string", required=True, description="Plain-text body."),
    "html": Input("string", description="HTML alternative of the body."),
    "cc": Input("any", description="Address or list of addresses."),
    "bcc": Input("any", description="Address or list of addresses."),
    "replyTo": Input("string"),
}
MAX_BULK = 500


class EmailConnector(Connector):
    key = "email"
    display_name = "Email"
    description = "Sends email over SMTP with the tenant's mail server."
    requires_auth = True
    config_keys = {
        "host": Input("string", required=True, description="SMTP server host name."),
        "port": Input("integer", default=587),
        "username": Input("string"),
        "password": Input("string"),
        "use_tls": Input("boolean", default=True, description="STARTTLS after connecting."),
        "use_ssl": Input(
            "boolean", default=False, description="TLS from the start (port 465); excludes use_tls."
        ),
        "from": Input(
            "string", required=True, description="Sender address, e.g. Acme Cases <cases@acme.test>."
        ),
    }
    actions = {
        "send": Action(
            "send",
            "Send email",
            {"to": Input("any", required=True, description="Address or list."), **MESSAGE_INPUTS},
        ),
        "send_bulk": Action(
            "send_bulk",
            "Send bulk email",
            {
                "recipients": Input("array", required=True, description="Addresses; each gets its own copy."),
                **{k: v for k, v in MESSAGE_INPUTS.items() if k not in ("cc", "bcc")},
            },
        ),
    }

    def check_config(self, config: dict[str, Any]) -> list[dict[str, str]]:
        problems = []
        if config.get("from") and not is_email_address(str(config["from"])):
            problems.append({"field": "config.from", "error": "must be an email address"})
        port = config.get("port")
        if port is not None and not (isinstance(port, int) and 0 < port < 65536):
            problems.append({"field": "config.port", "error": "must be a port number (1-65535)"})
        return problems

    def check_inputs(self, action: str, inputs: dict[str, Any]) -> list[dict[str, str]]:
        field = "recipients" if action == "send_bulk" else "to"
        addresses = addresses_of(inputs.get(field))
        if not addresses:
            return [{"field": field, "error": "at least one email address is required"}]
        if action == "send_bulk" and len(addresses) > MAX_BULK:
            return [{"field": field, "error": f"at most {MAX_BULK} recipients"}]
        everyone = addresses + addresses_of(inputs.get("cc")) + addresses_of(inputs.get("bcc"))
        bad = [a for a in everyone if not is_email_address(a)]
        return [{"field": field, "error": f"not an email address: {bad[0]}"}] if bad else []

    def invoke(
        self, action: str, inputs: dict[str, Any], config: dict[str, Any], context: InvocationContext
    ) -> Result:
        connection = smtp_connection(config)
        if action == "send_bulk":
            messages = [
                message(inputs, config, to=[address], message_id=f"{context.idempotency_key}.{index}")
                for index, address in enumerate(addresses_of(inputs["recipients"]))
            ]
        else:
            messages = [
                message(inputs, config, to=addresses_of(inputs["to"]), message_id=context.idempotency_key)
            ]
        sent = deliver(connection, messages, context)
        recipients = [r for m in messages for r in m.recipients()]
        return Result(250, {"sent": sent, "recipients": recipients}, output={"sent": sent})


def smtp_connection(config: dict[str, Any]) -> EmailBackend:
    host, sender = config.get("host"), config.get("from")
    if not host or not sender:
        raise ConnectorError("not_configured", "email: host and from must be configured")
    port = int(config.get("port") or 587)
    use_ssl = bool(config.get("use_ssl", False))
    check_host(str(host), port)
    return get_connection(
        SMTP_BACKEND,
        host=host,
        port=port,
        username=config.get("username") or "",
        password=config.get("password") or "",
        use_tls=bool(config.get("use_tls", True)) and not use_ssl,
        use_ssl=use_ssl,
        timeout=settings.CONNECTOR_TIMEOUT_SECONDS,
    )


def check_host(host: str, port: int) -> None:
    """The SMTP server must be a public address unless allow-listed, like any outbound URL."""
    try:
        addresses = resolve(host, port)
    except UnsafeTarget as exc:
        raise ConnectorError("network_error", f"email: {exc}", transient=True) from exc
    for ip in addresses:
        reason = refusal(ip)
        if ip in METADATA_ADDRESSES or (reason and not host_allowed(host, ip)):
            raise ConnectorError("unsafe_target", f"{host} resolves to {reason} ({ip}); refused")


def message(
    inputs: dict[str, Any], config: dict[str, Any], *, to: list[str], message_id: str
) -> EmailMultiAlternatives:
    email = EmailMultiAlternatives(
        subject=str(inputs["subject"]).replace("\n", " ").replace("\r", " "),
        body=str(inputs["body"]),
        from_email=str(config["from"]),
        to=to,
        cc=addresses_of(inputs.get("cc")),
        bcc=addresses_of(inputs.get("bcc")),
        reply_to=addresses_of(inputs.get("replyTo")),
        headers={"Message-ID": f"<{safe_id(message_id)}@connectors.casemgmt>"},
    )
    if inputs.get("html"):
        email.attach_alternative(str(inputs["html"]), "text/html")
    return email


def deliver(
    connection: EmailBackend, messages: list[EmailMultiAlternatives], context: InvocationContext
) -> int:
    where = f"smtp://{connection.host}:{connection.port}"
    try:
        with connection:
            sent = connection.send_messages(messages) or 0
    except Exception as exc:
        error = smtp_error(exc)
        context.record(url=where, method="SMTP", status_code=error.status_code, error=error.message)
        raise error from exc
    context.record(url=where, method="SMTP", status_code=250, body={"sent": sent})
    return sent


def smtp_error(exc: Exception) -> ConnectorError:
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        codes = [code for code, _ in exc.recipients.values()]
        transient = all(400 <= code < 500 for code in codes)
        refused = ", ".join(exc.recipients)
        return ConnectorError("smtp_error", f"email: recipients refused: {refused}", transient=transient,
                              status_code=codes[0] if codes else None)  # fmt: skip
    if isinstance(exc, smtplib.SMTPResponseException):
        code = exc.smtp_code
        text = (
            exc.smtp_error.decode(errors="replace")
            if isinstance(exc.smtp_error, bytes)
            else str(exc.smtp_error)
        )
        return ConnectorError("smtp_error", f"email: SMTP {code} {text}"[:300], transient=400 <= code < 500,
                              status_code=code)  # fmt: skip
    if isinstance(exc, socket.timeout | TimeoutError):
        return ConnectorError("timeout", "email: the SMTP server did not answer in time", transient=True)
    if isinstance(exc, smtplib.SMTPException | OSError):
        return ConnectorError(
            "network_error", f"email: {exc.__class__.__name__}: {exc}"[:300], transient=True
        )
    return ConnectorError("smtp_error", f"email: {exc.__class__.__name__}")


def addresses_of(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    items = value if isinstance(value, list) else str(value).split(",")
    return [str(item).strip() for item in items if str(item).strip()]


def safe_id(value: str) -> str:
    return "".join(c if c.isalnum() or c in "-._" else "-" for c in value)[:120]


CONNECTOR = EmailConnector()
