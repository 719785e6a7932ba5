"""What a connector is: the interface every module in `casemgmt.connectors.builtins` implements.

A connector declares its key, names, the tenant configuration it needs (and which of those keys
are secret) and its actions with their inputs; `GET /connectors` is generated from these
declarations. The framework (not the connector) renders template expressions in the inputs,
validates them against the declared inputs, loads and decrypts the tenant's configuration, logs the
invocation, counts it on /metrics, retries transient failures and applies the step's onFailure.
A connector only turns ready inputs into one call of its outside system.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from casemgmt.connectors.http import GuardedHttp

# Configuration keys that are always secret, whatever the connector declares: stored encrypted,
# shown as "***" on read, replaced by "***" in every log line and invocation log.
DEFAULT_SECRET_KEYS = frozenset({"token", "password", "apiKey", "secret", "webhookUrl", "clientSecret"})
INPUT_TYPES = ("string", "number", "integer", "boolean", "object", "array", "any")


@dataclass(frozen=True)
class Input:
    """One declared input of an action (or one key of a connector's tenant configuration).

    `type` is a JSON type name (see INPUT_TYPES); `enum` restricts a string to listed values;
    `required` inputs must be present. `default` fills a missing optional input."""

    type: str = "string"
    required: bool = False
    enum: tuple[str, ...] | None = None
    default: Any = None
    description: str = ""


@dataclass(frozen=True)
class Action:
    name: str
    display_name: str
    inputs: Mapping[str, Input] = field(default_factory=dict)
    description: str = ""


@dataclass
class Result:
    """What an action produced: stored as the step's result and shown by the test endpoint.

    `status_code` is the outside system's status (HTTP status; 250 for an accepted mail), `body` a
    JSON value (parsed JSON when the reply was JSON, else text), `output` an optional smaller value
    to store in `step_results[stepId]` instead of {statusCode, body}."""

    status_code: int | None
    body: Any = None
    output: Any = None

    def step_result(self) -> Any:
        if self.output is not None:
            return self.output
        return {"statusCode": self.status_code, "body": self.body}


class ConnectorError(Exception):
    """The one way a connector reports failure.

    `code` is a short machine word (`http_error`, `timeout`, `unsafe_target`, `not_configured`,
    `invalid_input`, `remote_error`...). `transient=True` means trying again later may succeed
    (network failure, timeout, HTTP 429 or 5xx): the framework retries it with backoff; anything
    else fails at once and goes to the step's onFailure. `status_code`/`body` carry the outside
    system's reply when there was one (shown by the test endpoint, kept in the invocation log).
    Messages must not contain secrets (the framework also scrubs known secret values)."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        transient: bool = False,
        status_code: int | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.code, self.message, self.transient = code, message, transient
        self.status_code, self.body = status_code, body


@dataclass
class InvocationContext:
    """What the framework hands a connector for one invocation.

    `http` is the only way a connector may reach the network over HTTP: it applies the SSRF guard
    (after DNS resolution, on every redirect, with the checked address pinned for the connection),
    timeouts and redaction, and records each exchange for the invocation log. `idempotency_key` is
    stable across retries and redeliveries of one step execution: send it where the protocol has a
    place for it (an `Idempotency-Key` header, a client message id). `template_context` holds
    `case_data`, `step_results`, `case_number`, `now` for connectors that render more than their
    inputs (a PDF template). `case_id`/`step_id` are None for a test call."""

    tenant_id: Any
    connector: str
    action: str
    idempotency_key: str
    http: GuardedHttp
    case_id: Any = None
    step_id: str | None = None
    template_context: dict[str, Any] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()
    exchanges: list[dict[str, Any]] = field(default_factory=list)

    def record(
        self, *, url: str, method: str, headers: Mapping[str, str] | None = None, status_code: int | None,
        body: Any = None, error: str = "",
    ) -> None:  # fmt: skip
        """For non-HTTP protocols (SMTP): note what was sent where, for the invocation log.
        The HTTP client calls this itself for every request."""
        self.exchanges.append(
            {"url": url, "method": method, "headers": dict(headers or {}), "statusCode": status_code,
             "body": body, "error": error}
        )  # fmt: skip


class Connector:
    """Base class of a connector. Subclass it in `builtins/<key>.py` and set `CONNECTOR = Mine()`.

    `config_keys` declares the tenant configuration (`PUT /connectors/{key}/config`); keys in
    `secret_keys` (added to DEFAULT_SECRET_KEYS) are encrypted at rest and redacted. `requires_auth`
    means the connector cannot run until its tenant configuration is stored."""

    key: str = ""
    display_name: str = ""
    description: str = ""
    requires_auth: bool = False
    config_keys: Mapping[str, Input] = {}
    secret_keys: frozenset[str] = frozenset()
    actions: Mapping[str, Action] = {}
    # Hidden from GET /connectors (e.g. the inbound webhook receiver is not callable as a step).
    listed: bool = True
    # False for actions that are not outbound calls a step may make (inbound receive).
    invocable: bool = True

    def all_secret_keys(self) -> frozenset[str]:
        return DEFAULT_SECRET_KEYS | self.secret_keys

    def invoke(
        self, action: str, inputs: dict[str, Any], config: dict[str, Any], context: InvocationContext
    ) -> Result:
        """Performs `action` with rendered, validated `inputs` and the tenant's decrypted
        `config`. Returns a Result or raises ConnectorError. Never reaches the network except
        through `context.http` (HTTP) or Django's email backend (SMTP)."""
        raise NotImplementedError

    def prepare(self, action: str, inputs: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        """Called with the rendered, checked inputs when the call is queued, inside the transaction of the
        case change that caused it, with the template context (`case_data`, `step_results`,
        `case_number`, `now`, `case_id`). Returns the inputs to store and later pass to invoke, so
        a connector can snapshot case state at that moment (the webhook payload). Default: as is."""
        return inputs

    def check_config(self, config: dict[str, Any]) -> list[dict[str, str]]:
        """Extra problems of a tenant configuration (beyond declared keys and types), as
        [{field: "config.<key>", error}]. Default: none."""
        return []

    def check_inputs(self, action: str, inputs: dict[str, Any]) -> list[dict[str, str]]:
        """Extra, connector-specific input problems as [{field, error}] (beyond the declared
        types, enums and required inputs, which the framework checks). Default: none."""
        return []
