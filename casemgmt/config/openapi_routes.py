"""The routes the case service serves outside DRF, which drf-spectacular cannot see: the probes and
Prometheus metrics (casemgmt/ops) and the WebSocket (casemgmt/realtime). A POSTPROCESSING_HOOKS
entry adds them before the shared hook gives every operation its error answers."""

from __future__ import annotations

from typing import Any

from casemgmt.realtime.tickets import TICKET_SECONDS

PUBLIC: list[dict[str, Any]] = [{}]  # no credentials


def _text(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"text/plain": {"schema": {"type": "string"}}}}


def _error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _probe(operation_id: str, summary: str, description: str, responses: dict[str, Any]) -> dict[str, Any]:
    return {
        "get": {
            "operationId": operation_id,
            "summary": summary,
            "description": description,
            "tags": ["Operations"],
            "security": PUBLIC,
            "responses": responses,
        }
    }


HEALTH_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["status", "database", "uptime", "version"],
    "properties": {
        "status": {"type": "string", "enum": ["ok", "degraded"]},
        "database": {"type": "string", "enum": ["ok", "unavailable"]},
        "uptime": {"type": "number", "description": "Seconds since this process started."},
        "version": {"type": "string"},
    },
}

WEBSOCKET_DESCRIPTION = """
Opens the WebSocket of the principal's tenant: a GET with `Upgrade: websocket` (the handshake),
authenticated by one of, in this order: `ticket` (one use, from `POST /ws/ticket`; preferred),
`token` (a JWT or API key; it shows in proxy logs), or an `Authorization: Bearer` header (for
clients that can set one).

Each message is `{"type", "timestamp", "data"}` (e.g. `case.created`, `task.assigned`), sent only to
sockets whose principal holds the permission the event needs. Send `{"type": "ping"}` to get
`{"type": "pong"}`. The socket is closed with code 4401 when the credential is missing or invalid,
or stops authenticating while open (logout, disabled account, password change, expiry). Delivery
is best effort: after a reconnect, read what was missed from the lists.

The same GET without the upgrade (plain HTTP) is answered 426 `upgrade_required`.
""".strip()

ROUTES: dict[str, dict[str, Any]] = {
    "/health": _probe(
        "getHealth",
        "Health",
        "Whether the service reaches its database, its version and uptime, for monitors. Always 200: "
        "`status` says `degraded` when the database is unreachable.",
        {"200": {"description": "", "content": {"application/json": {"schema": HEALTH_BODY}}}},
    ),
    "/healthz": _probe(
        "getLiveness",
        "Liveness probe",
        "The process answers HTTP (`ok`); it checks nothing else, so a restart is not triggered by an "
        "outage of the database or the broker.",
        {"200": _text("`ok`")},
    ),
    "/readyz": _probe(
        "getReadiness",
        "Readiness probe",
        "Whether the process can serve: it reaches the database and the message broker.",
        {
            "200": _text("`ready`"),
            "503": _text("`not ready: <database|broker, ...> unreachable`"),
        },
    ),
    "/metrics": _probe(
        "getPrometheusMetrics",
        "Prometheus metrics",
        "Request, database and cache metrics in the Prometheus text exposition format.",
        {"200": _text("Prometheus text exposition format.")},
    ),
    "/ws": {
        "get": {
            "operationId": "openWebSocket",
            "summary": "Tenant events (WebSocket)",
            "description": WEBSOCKET_DESCRIPTION,
            "tags": ["Real-time"],
            "security": PUBLIC,
            "parameters": [
                {
                    "name": "ticket",
                    "in": "query",
                    "description": f"A one-use ticket from `POST /ws/ticket`, valid for {TICKET_SECONDS} seconds.",
                    "schema": {"type": "string"},
                },
                {
                    "name": "token",
                    "in": "query",
                    "description": "A JWT from `POST /auth/login` or an API key.",
                    "schema": {"type": "string"},
                },
            ],
            "responses": {
                "101": {"description": "Switching Protocols: the WebSocket is open."},
                "426": _error("Asked without `Upgrade: websocket` (upgrade_required)."),
            },
        }
    },
}


def add_routes(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular POSTPROCESSING_HOOKS entry."""
    paths = result.setdefault("paths", {})
    for path, item in ROUTES.items():
        paths.setdefault(path, {}).update(item)
    result["paths"] = dict(sorted(paths.items()))
    return result
