"""A real local SMTP server (aiosmtpd) that keeps what it receives, for end-to-end email tests."""

from __future__ import annotations

import email
from collections.abc import Iterator
from contextlib import contextmanager

from aiosmtpd.controller import Controller

from tests.support.processes import free_port


class Inbox:
    def __init__(self) -> None:
        self.messages: list[email.message.Message] = []

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd's hook name
        self.messages.append(email.message_from_bytes(envelope.original_content))
        return "250 Message accepted"

    def to(self, address: str) -> list[email.message.Message]:
        return [m for m in self.messages if m["To"] == address]


@contextmanager
def smtp_sink() -> Iterator[tuple[Inbox, int]]:
    """Yields the inbox and the port of an SMTP server on 127.0.0.1 that accepts every message."""
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield inbox, controller.port
    finally:
        controller.stop()


def case_smtp_env(port: int) -> dict[str, str]:
    """Environment for a case-service worker that sends its mail to the sink on `port`."""
    return {
        "CASE_EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "CASE_EMAIL_HOST": "127.0.0.1",
        "CASE_EMAIL_PORT": str(port),
        "CASE_PUBLIC_BASE_URL": "https://cases.example.test",
    }
