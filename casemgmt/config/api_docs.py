"""What the case service's OpenAPI document says to people: its introduction, its resources (tags)
and which paths belong to each, and the operation ids the naming rule gets wrong. Plain data, read
by the settings (no Django import here)."""

DESCRIPTION = """
Cases, their workflows and tasks, documents, reports and the tenant that owns them. Every route
but the probes, login and inbound webhooks acts for one principal of one tenant: it sees only that
tenant's data, and only what its roles' permissions allow.

## Authentication

Send a credential as a bearer token: `Authorization: Bearer <credential>`. It is either

- a **JWT** from `POST /auth/login`, for people: it expires after an hour (`expiresAt`), and logging
  out, a password change or disabling the account revokes it at once;
- an **API key** (`cmk_...`), for programs: created with an agent principal
  (`POST /admin/principals` with `"kind": "agent"`), answered once as `apiKey`, stored only hashed.

```sh
# log in and keep the token
TOKEN=$(curl -s https://cases.example.com/auth/login \\
  -H 'Content-Type: application/json' \\
  -d '{"email": "ada@example.com", "password": "correct horse battery staple"}' | jq -r .token)

# call the API with it (or with an API key the same way)
curl -s https://cases.example.com/cases?limit=10 -H "Authorization: Bearer $TOKEN"

# open a case
curl -s https://cases.example.com/cases -H "Authorization: Bearer $TOKEN" \\
  -H 'Content-Type: application/json' -d '{"case_type_key": "complaint", "case_data": {}}'
```

No credential, or one that is invalid, expired or revoked: 401. A valid one without the permission
an operation needs: 403. Another tenant's resource: 404, as if it did not exist. Repeated failed
logins lock the address or the account for a while (429).

The WebSocket `GET /ws` pushes the tenant's events; open it with a one-use ticket from
`POST /ws/ticket` (`/ws?ticket=...`) rather than a token in the URL.

## Errors

Every error, of every route, has one shape:

```json
{"error": true, "code": "validation_error", "message": "title: This field is required.",
 "details": {"field": "title", "error": "This field is required.",
             "errors": [{"field": "title", "error": "This field is required."}]}}
```

`code` is for programs (`validation_error`, `not_authenticated`, `permission_denied`,
`not_found`, `version_conflict`, `invalid_state`, `rate_limited`, ...), `message` for people. The
service never answers a 500 on purpose: an unexpected failure is `internal_error`.

## Paging

Lists take `limit` (default 25, at most 100) and `offset` (default 0) and answer
`{"data": [...], "total": <all matches>, "next": <URL of the next page or null>}`. A value out of
range is a 400, not a silent clamp.

## Concurrent updates

There are no idempotency keys here: writes that could race carry the version they expect
(`PATCH /cases/{case_id}/data` takes `version` or an `If-Match` header) and are refused with 409
`version_conflict` when the resource moved on; claims and state changes answer 409 `invalid_state`
when another request got there first. Retrying a refused request is always safe.

## Rate limits

Case search, audit exports and report queries are limited per tenant (by default 120, 10 and 30 a
minute). Over a limit: 429 `rate_limited` with a `Retry-After` header (seconds) and
`details.retryAfter`.

## Timestamps

ISO 8601 in UTC with milliseconds, e.g. `2026-01-31T09:30:00.000Z`.
""".strip()

# (name, description), in the order the docs page shows them.
_TAGS = [
    ("Authentication", "Log in and out, passwords, the signed-in principal's preferences."),
    ("Cases", "Open, read, search, update and close cases; the dashboard."),
    ("Case events", "A case's history, as a hash chain that can be exported and verified."),
    ("Case types", "The kinds of case a tenant handles and the data each one holds."),
    ("Workflows", "The steps a case type's cases go through, drafted, published and withdrawn."),
    ("Tasks", "The inbox of work waiting for people: claim, draft, complete, reassign, escalate."),
    ("Documents", "Files attached to cases, stored in the vault; signed download links."),
    ("Erasure", "Erasing a data subject's documents and personal data on request."),
    ("Reports", "Saved report queries, their runs, summaries and questions in plain language."),
    ("Connectors", "Outbound integrations (HTTP, Slack, Jira...): configuration, tests, deliveries."),
    ("Prompt templates", "Versioned templates for the language-model steps of workflows."),
    ("Inbound webhooks", "Endpoints other systems post to, and their registration."),
    ("Orchestrator callbacks", "Where the orchestrator reports the runs a case started."),
    ("Users and roles", "Principals (people and agents with API keys) and the roles granting permissions."),
    ("Teams", "Groups of users that tasks name as candidates; members and leads."),
    ("Tenant", "The tenant's settings, branding, themes, terminology and activity."),
    ("Audit", "The tenant's audit trail: list, export, chain verification and signed checkpoints."),
    ("Real-time", "The WebSocket of the tenant's events, and the tickets that open it."),
    ("Operations", "Probes and metrics for load balancers, orchestrators and Prometheus (no credentials)."),
]
TAGS = [{"name": name, "description": description} for name, description in _TAGS]

# (path prefix, tag): an operation belongs to the tag of the longest prefix its path is under.
TAG_PATHS = [
    ("/auth", "Authentication"),
    ("/cases", "Cases"),
    ("/cases/{case_id}/events", "Case events"),
    ("/cases/{case_id}/documents", "Documents"),
    ("/vault", "Documents"),
    ("/vault/erasure", "Erasure"),
    ("/admin/erasure", "Erasure"),
    ("/case-types", "Case types"),
    ("/workflows", "Workflows"),
    ("/tasks", "Tasks"),
    ("/reports", "Reports"),
    ("/connectors", "Connectors"),
    ("/prompt-templates", "Prompt templates"),
    ("/webhooks", "Inbound webhooks"),
    ("/admin/webhooks/inbound", "Inbound webhooks"),
    ("/webhooks/orchestrator", "Orchestrator callbacks"),
    ("/admin/principals", "Users and roles"),
    ("/admin/roles", "Users and roles"),
    ("/users", "Users and roles"),
    ("/teams", "Teams"),
    ("/tenant", "Tenant"),
    ("/activity", "Tenant"),
    ("/manifest.json", "Tenant"),
    ("/audit", "Audit"),
    ("/ws", "Real-time"),
    ("/health", "Operations"),
    ("/healthz", "Operations"),
    ("/readyz", "Operations"),
    ("/metrics", "Operations"),
]

# Views whose class name reads badly as an operation id (by class name or `ClassName.METHOD`).
OPERATION_IDS = {
    "AuditListApi": "listAuditEvents",
    "AuditVerifyChainApi": "verifyAuditChain",
    "VaultUploadApi": "uploadDocument",
    "VaultDownloadApi": "downloadDocument",
    "VaultSignedDownloadApi": "downloadDocumentBySignedUrl",
    "VaultSignedUrlApi": "createDocumentSignedUrl",
    "VaultDocumentDeleteApi": "deleteDocument",
    "TaskDraftApi": "saveTaskDraft",
    "OrchestratorCallbackApi": "receiveOrchestratorCallback",
    "ConnectorTestApi": "testConnectorAction",
    "DeliveryListApi": "listConnectorDeliveries",
    "DeliveryReplayApi": "replayConnectorDelivery",
    "InvocationListApi": "listConnectorInvocations",
    "ManifestApi": "getWebAppManifest",
    "ActivityApi": "getTenantActivity",
}
