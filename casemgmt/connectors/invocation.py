"""Running one connector call: tenant configuration, guarded HTTP, the invocation log, the log line.

Used by the outbox worker (steps, deliveries) and by the test endpoint; whatever the connector
does, the caller gets an Outcome, never an exception.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from casemgmt.connectors.base import Connector, ConnectorError, InvocationContext, Result
from casemgmt.connectors.http import GuardedHttp
from casemgmt.connectors.models import Delivery, Invocation
from casemgmt.connectors.redaction import redact_headers, scrub, scrub_value, secret_values
from casemgmt.connectors.selectors import connector_config_values
from shared.crypto import UndecryptableSecret

logger = logging.getLogger(__name__)
EXCERPT_CHARS = 2000


@dataclass
class Outcome:
    result: Result | None = None
    error: ConnectorError | None = None
    secrets: tuple[str, ...] = ()
    exchanges: list[dict[str, Any]] = field(default_factory=list)

    @property
    def success(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class Call:
    """Who asks for the call and why: stored on the invocation log row."""

    tenant_id: UUID | str
    idempotency_key: str
    source: str = Invocation.STEP
    delivery: Delivery | None = None
    case_id: Any = None
    step_id: str | None = None
    attempt: int = 1
    template_context: dict[str, Any] = field(default_factory=dict)


def tenant_config(connector: Connector, tenant_id: UUID | str) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The decrypted configuration and the secret values in it; raises ConnectorError when a
    connector that needs credentials has none (not_configured) or they cannot be decrypted."""
    try:
        config = connector_config_values(tenant_id=tenant_id, key=connector.key)
    except UndecryptableSecret as exc:
        raise ConnectorError("not_configured", str(exc)) from exc
    if config is None and connector.requires_auth:
        raise ConnectorError(
            "not_configured", f"connector {connector.key!r} is not configured for this tenant"
        )
    config = config or {}
    return config, tuple(secret_values(config, connector.all_secret_keys()))


def invoke(connector: Connector, action: str, inputs: dict[str, Any], call: Call) -> Outcome:
    outcome = Outcome()
    started = time.monotonic()
    try:
        config, outcome.secrets = tenant_config(connector, call.tenant_id)
        context = InvocationContext(
            tenant_id=call.tenant_id, connector=connector.key, action=action,
            idempotency_key=call.idempotency_key, case_id=call.case_id, step_id=call.step_id,
            http=GuardedHttp(secrets=outcome.secrets, on_exchange=outcome.exchanges.append),
            template_context=call.template_context, secrets=outcome.secrets, exchanges=outcome.exchanges,
        )  # fmt: skip
        outcome.result = connector.invoke(action, inputs, config, context)
    except ConnectorError as exc:
        outcome.error = exc
    except Exception as exc:  # noqa: BLE001 - a connector bug must not kill the worker's bookkeeping
        # No traceback: exception messages can quote credentials (a header value, a URL); the
        # message is scrubbed below and logged with the invocation.
        outcome.error = ConnectorError("internal_error", f"{exc.__class__.__name__}: {exc}")
    _scrub_outcome(outcome)
    _log(connector, action, call, outcome, round((time.monotonic() - started) * 1000))
    return outcome


def _scrub_outcome(outcome: Outcome) -> None:
    if outcome.error is not None:
        outcome.error.message = scrub(outcome.error.message, outcome.secrets)
        outcome.error.body = scrub_value(outcome.error.body, outcome.secrets)
    if outcome.result is not None:
        outcome.result.body = scrub_value(outcome.result.body, outcome.secrets)
        outcome.result.output = scrub_value(outcome.result.output, outcome.secrets)


def _log(connector: Connector, action: str, call: Call, outcome: Outcome, latency_ms: int) -> None:
    last = outcome.exchanges[-1] if outcome.exchanges else {}
    error = outcome.error
    status = last.get("statusCode") or (outcome.result.status_code if outcome.result else None)
    Invocation.objects.create(
        tenant_id=call.tenant_id, connector=connector.key, action=action, source=call.source,
        delivery=call.delivery, case_id=call.case_id, step_id=call.step_id or "", attempt=call.attempt,
        url=scrub(str(last.get("url", "")), outcome.secrets), method=str(last.get("method", ""))[:10],
        request_headers=redact_headers(last.get("headers") or {}, outcome.secrets), status_code=status,
        response_excerpt=scrub(str(last.get("body", "")), outcome.secrets)[:EXCERPT_CHARS],
        latency_ms=latency_ms, success=error is None, error_code=error.code[:50] if error else "",
        error=error.message[:EXCERPT_CHARS] if error else "",
    )  # fmt: skip
    level = logging.INFO if error is None else logging.WARNING
    logger.log(
        level, "connector %s.%s key=%s attempt=%s status=%s latency=%sms error=%s",
        connector.key, action, call.idempotency_key, call.attempt, status, latency_ms,
        f"{error.code}: {error.message}" if error else "-",
    )  # fmt: skip
