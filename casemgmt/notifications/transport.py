"""How a notification email leaves: through the tenant's `email` connector when the tenant has
configured one (its SMTP server and sender, with the connector's address check), else through the
service's own mail settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.mail.backends.base import BaseEmailBackend

from casemgmt.connectors.base import ConnectorError
from casemgmt.connectors.builtins.email import smtp_connection
from casemgmt.connectors.selectors import connector_config_values
from shared.crypto import UndecryptableSecret


class TransportUnusable(Exception):
    """The tenant's email configuration cannot be used; `transient` says whether later may work."""

    def __init__(self, message: str, *, transient: bool) -> None:
        super().__init__(message)
        self.transient = transient


@dataclass(frozen=True)
class Transport:
    connection: BaseEmailBackend | None  # None: the service's default backend (CASE_EMAIL_*)
    from_email: str | None  # None: CASE_DEFAULT_FROM_EMAIL


def transport_for(*, tenant_id: Any) -> Transport:
    try:
        config = connector_config_values(tenant_id=tenant_id, key="email")
    except UndecryptableSecret as exc:
        raise TransportUnusable(str(exc), transient=False) from exc
    if not config:
        return Transport(connection=None, from_email=None)
    try:
        connection = smtp_connection(config)
    except ConnectorError as exc:  # an unsafe or unresolvable SMTP host
        raise TransportUnusable(exc.message, transient=exc.transient) from exc
    return Transport(connection=connection, from_email=str(config["from"]))
