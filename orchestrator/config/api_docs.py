"""What the orchestrator's OpenAPI document says to people: its introduction, its resources (tags)
and which paths belong to each, and the operation ids the naming rule gets wrong. Plain data, read
by the settings (no Django import here)."""

DESCRIPTION = """
Task and DAG definitions, the runs that execute them on agents, schedules, pools and queues, and
the webhooks that report what happened.

## Authentication

When security is on (`ORCH_SECURITY_ENABLED`, as deployed), every route but `GET /api/health` needs
a credential with a role: **viewer** reads, **operator** also schedules, cancels, reruns, pauses and
resumes, **admin** may do everything. A credential is one of

- an **API key** (`ork_...`) in `X-API-Key`, for programs, created with
  `manage_orch.py create_api_key --name ci --role operator` and shown once;
- a **JWT** in `Authorization: Bearer <token>`, signed with the service's key (HS256, or RS256 with
  `ORCH_JWT_VERIFYING_KEY`), its role in the `role` claim;
- the **session** of a login to the console (Django login, or OIDC when configured).

```sh
# with an API key
curl -s https://orchestrator.example.com/api/runs?limit=10 -H "X-API-Key: $ORCH_API_KEY"

# with a JWT
curl -s https://orchestrator.example.com/api/dags -H "Authorization: Bearer $ORCH_JWT"

# schedule a task; a retry with the same Idempotency-Key gets the first answer, not a second run
curl -s https://orchestrator.example.com/api/schedule-task -H "X-API-Key: $ORCH_API_KEY" \\
  -H 'Content-Type: application/json' -H 'Idempotency-Key: nightly-2026-01-31' \\
  -d '{"task_id": "extract", "context": "production"}'
```

No credential, or an invalid, expired or revoked one: 401. A role below what the operation needs:
403.

## Errors

Every error, of every route, has one shape:

```json
{"error": true, "code": "validation_error", "message": "timeout_seconds: must be a positive integer",
 "details": {"field": "timeout_seconds", "error": "must be a positive integer",
             "errors": [{"field": "timeout_seconds", "error": "must be a positive integer"}]}}
```

`code` is for programs (`validation_error`, `not_authenticated`, `permission_denied`,
`not_found`, `already_exists`, `invalid_state`, ...), `message` for people.

## Paging

Lists take `limit` (default 50, at most 500) and `offset` (default 0) and answer the items under
the resource's name with `total`, `limit` and `offset`, e.g.
`{"runs": [...], "total": 1234, "limit": 50, "offset": 0}`. Tasks, DAGs and runs sort with
`sort=<field>[:asc|desc]`. A value out of range is a 400, not a silent clamp.

## Idempotency keys

`POST /api/schedule-task`, `/api/schedule-dag` and `/api/rerun/{run_id}` take an `Idempotency-Key`
header (1-255 printable ASCII characters). A retry with the same key within 24 hours answers the
first response, status and body, instead of starting a second run; the same key with another
request is a 422 `idempotency_key_reused`. Only successful answers are kept.

## Rate limits

The service sets no request rate limit of its own; a 429 `rate_limited` (from a limit a deployment
adds) carries a `Retry-After` header in seconds. Work is bounded instead by queues, pools and each
DAG's `max_active_runs`.

## Timestamps

ISO 8601 in UTC with milliseconds, e.g. `2026-01-31T09:30:00.000Z`.
""".strip()

# (name, description), in the order the docs page shows them.
_TAGS = [
    ("Runs", "Schedule tasks and DAGs, follow, pause, resume, cancel and rerun their runs; task run logs."),
    ("Tasks", "Task definitions: the command a task runs, its parameters, retries and dependencies."),
    ("DAGs", "DAG definitions: tasks and the order they run in."),
    ("Contexts", "Named sets of variables a run is scheduled in, which may extend one another."),
    ("Parameter sets", "Reusable parameters for tasks."),
    ("Schedules", "Cron and interval schedules that start runs, their pauses and catch-up."),
    ("Pools", "Slots that bound how many task runs of a kind execute at once."),
    ("Queues", "The queues agents take task runs from: lengths and purges."),
    ("Agents", "The workers that execute task runs, and their heartbeats."),
    ("Webhooks", "Registrations that receive run and agent events, and their deliveries."),
    ("Definitions", "Definitions as code: the plan (dry run) of syncing a folder of YAML definitions."),
    ("Audit", "The audit trail of every write: list, export, chain verification and signed checkpoints."),
    ("System", "Health, status, metrics and the Prometheus exposition."),
]
TAGS = [{"name": name, "description": description} for name, description in _TAGS]

# (path prefix, tag): an operation belongs to the tag of the longest prefix its path is under.
TAG_PATHS = [
    ("/api/runs", "Runs"),
    ("/api/schedule-task", "Runs"),
    ("/api/schedule-dag", "Runs"),
    ("/api/cancel-run", "Runs"),
    ("/api/rerun", "Runs"),
    ("/api/tasks/{task_run_id}", "Runs"),  # a task run's logs
    ("/api/tasks", "Tasks"),
    ("/api/dags", "DAGs"),
    ("/api/contexts", "Contexts"),
    ("/api/parameter-sets", "Parameter sets"),
    ("/api/schedules", "Schedules"),
    ("/api/pools", "Pools"),
    ("/api/queues", "Queues"),
    ("/api/agents", "Agents"),
    ("/api/webhooks", "Webhooks"),
    ("/api/definitions", "Definitions"),
    ("/api/audit", "Audit"),
    ("/api/health", "System"),
    ("/api/status", "System"),
    ("/api/metrics", "System"),
    ("/metrics", "System"),
]

# Views whose class name reads badly as an operation id (by class name or `ClassName.METHOD`).
OPERATION_IDS = {
    "TaskLogsApi": "getTaskRunLogs",
    "TaskLogStreamApi": "streamTaskRunLogs",
    "DeliveryListApi": "listWebhookDeliveries",
    "AuditVerifyApi": "verifyAuditChain",
    "DefinitionsPlanApi": "planDefinitionsSync",
}
