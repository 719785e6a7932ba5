"""Orchestrator settings. The only module that reads the environment."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import environ

from orchestrator.config import api_docs
from shared import conf
from shared.audit import signing as audit_signing
from shared.web import clientip

BASE_DIR = conf.ROOT_DIR
env = environ.Env()
VAR_DIR = Path(env.str("ORCH_VAR_DIR", default=str(BASE_DIR / "var" / "orch")))

SERVICE_NAME = "orchestrator"
SERVICE_VERSION = "0.1.0"
PRODUCT_NAME = "Workflow Orchestration"  # shown in the Django admin's header and title
SECRET_KEY = env.str("ORCH_SECRET_KEY", default="")
DEBUG = env.bool("ORCH_DEBUG", default=False)
ALLOWED_HOSTS = env.list("ORCH_ALLOWED_HOSTS", default=["*"])
CSRF_TRUSTED_ORIGINS = env.list("ORCH_CSRF_TRUSTED_ORIGINS", default=[])
# The time a request's headers and body may take to arrive: this many seconds, plus one second for
# every REQUEST_BODY_MIN_RATE bytes of body received (0: no allowance); later, 408. 0 turns it off.
REQUEST_BODY_TIMEOUT_SECONDS = env.float("ORCH_REQUEST_BODY_TIMEOUT_SECONDS", default=30.0)
REQUEST_BODY_MIN_RATE = env.int("ORCH_REQUEST_BODY_MIN_RATE", default=1024)
# Reverse proxies whose X-Forwarded-For is believed (addresses and CIDR ranges); the client is the
# right-most address of the chain that is not one of them (shared/web/clientip.py).
TRUSTED_PROXIES = clientip.trusted_networks(
    env.list("ORCH_TRUSTED_PROXIES", default=[]), setting="ORCH_TRUSTED_PROXIES"
)

INSTALLED_APPS = [
    *conf.CORE_APPS,
    "orchestrator.security",
    "orchestrator.definitions",
    "orchestrator.runs",
    "orchestrator.agents",
    "orchestrator.events",
    "orchestrator.webhooks",
    "orchestrator.schedules",
    "orchestrator.system",
    "orchestrator.audit",
    "orchestrator.console",
]

MIDDLEWARE = conf.MIDDLEWARE

ROOT_URLCONF = "orchestrator.config.urls"
ASGI_APPLICATION = "orchestrator.config.asgi.application"
APPEND_SLASH = False

TEMPLATES = conf.TEMPLATES

DATABASES = {
    "default": conf.database(
        env.db_url("ORCH_DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'orch.sqlite3'}"),
        conn_max_age=env.int("ORCH_DB_CONN_MAX_AGE", default=0),
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Redis: databases 3 (broker) and 4 (cache) by default, keys prefixed "orch:", so the orchestrator
# never collides with the case service (0, 1, 2).
REDIS_URL = env.str("ORCH_REDIS_URL", default="")
CELERY_DEFAULT_QUEUE = "orch.control"
CELERY_BROKER_URL = env.str("ORCH_BROKER_URL", default=f"{REDIS_URL}/3" if REDIS_URL else "filesystem://")
CELERY_BROKER_TRANSPORT_OPTIONS = conf.broker_transport_options(CELERY_BROKER_URL, VAR_DIR / "broker")
CELERY_BROKER_TRANSPORT = conf.broker_transport(CELERY_BROKER_URL)
CELERY_TASK_DEFAULT_QUEUE = CELERY_DEFAULT_QUEUE
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
# A task is acknowledged after it ran and requeued when its agent dies, so a crash never loses one
# (every task is idempotent); one message prefetched per process keeps long tasks from starving others.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 15 * 60
CELERY_TASK_SOFT_TIME_LIMIT = 14 * 60
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_TIMEZONE = "UTC"
if REDIS_URL:
    CACHES = {"default": conf.redis_cache(f"{REDIS_URL}/4", "orch:")}
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }

REST_FRAMEWORK = conf.rest_framework(["orchestrator.security.authentication.OrchestratorAuthentication"])
REST_FRAMEWORK["DEFAULT_PERMISSION_CLASSES"] = ["orchestrator.security.permissions.RolePermission"]
SPECTACULAR_SETTINGS = {
    "TITLE": "Orchestrator API",
    "VERSION": SERVICE_VERSION,
    "SERVE_INCLUDE_SCHEMA": False,
    # Redoc from the pinned copy in drf-spectacular-sidecar, served by the service: no CDN.
    "REDOC_DIST": "SIDECAR",
    # Error responses and the strings the parser refuses, added to every operation alike.
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "orchestrator.system.openapi.id_path_parameters",
        "shared.api.openapi.postprocess",
    ],
    # With security on only /api/health is open; the schema needs a viewer.
    "SERVE_PERMISSIONS": ["orchestrator.security.permissions.RolePermission"],
    # What the document says to people (config/api_docs.py): the introduction and the resources.
    "DESCRIPTION": api_docs.DESCRIPTION,
    "TAGS": api_docs.TAGS,
}
# Operation ids and tags, given centrally by shared.api.schema.AutoSchema rather than per view.
API_DOCS_TAG_PATHS = api_docs.TAG_PATHS
API_DOCS_OPERATION_IDS = api_docs.OPERATION_IDS

# Security: off by default for the embedded run, on in deploy/.
ORCH_SECURITY_ENABLED = env.bool("ORCH_SECURITY_ENABLED", default=False)
JWT = {
    "SIGNING_KEY": env.str("ORCH_JWT_SIGNING_KEY", default="") or SECRET_KEY,
    "VERIFYING_KEY": env.str("ORCH_JWT_VERIFYING_KEY", default="") or None,
    "ALGORITHM": env.str("ORCH_JWT_ALGORITHM", default="HS256"),
    "ISSUER": env.str("ORCH_JWT_ISSUER", default="orchestrator"),
    "AUDIENCE": env.str("ORCH_JWT_AUDIENCE", default="orchestrator"),
    "ROLE_CLAIM": env.str("ORCH_JWT_ROLE_CLAIM", default="role"),
    "LIFETIME": timedelta(seconds=env.int("ORCH_JWT_LIFETIME_SECONDS", default=3600)),
}

# OIDC login (mozilla-django-oidc), only when a client id is configured. The session it creates
# authenticates API calls; the role comes from OIDC_ROLE_CLAIM (see orchestrator/security/oidc.py).
OIDC_RP_CLIENT_ID = env.str("ORCH_OIDC_RP_CLIENT_ID", default="")
OIDC_ENABLED = bool(OIDC_RP_CLIENT_ID)
OIDC_ROLE_CLAIM = env.str("ORCH_OIDC_ROLE_CLAIM", default="orchestrator_role")
OIDC_DEFAULT_ROLE = env.str("ORCH_OIDC_DEFAULT_ROLE", default="viewer")
if OIDC_ENABLED:
    INSTALLED_APPS.append("mozilla_django_oidc")
    AUTHENTICATION_BACKENDS = [
        "orchestrator.security.oidc.RoleMappingOIDCBackend",
        "django.contrib.auth.backends.ModelBackend",
    ]
    OIDC_RP_CLIENT_SECRET = env.str("ORCH_OIDC_RP_CLIENT_SECRET")
    OIDC_OP_AUTHORIZATION_ENDPOINT = env.str("ORCH_OIDC_OP_AUTHORIZATION_ENDPOINT")
    OIDC_OP_TOKEN_ENDPOINT = env.str("ORCH_OIDC_OP_TOKEN_ENDPOINT")
    OIDC_OP_USER_ENDPOINT = env.str("ORCH_OIDC_OP_USER_ENDPOINT")
    OIDC_OP_JWKS_ENDPOINT = env.str("ORCH_OIDC_OP_JWKS_ENDPOINT", default="")
    OIDC_RP_SIGN_ALGO = env.str("ORCH_OIDC_RP_SIGN_ALGO", default="RS256")
    OIDC_RP_SCOPES = env.str("ORCH_OIDC_RP_SCOPES", default="openid email profile")
    LOGIN_REDIRECT_URL_FAILURE = "/admin/login/"
    LOGOUT_REDIRECT_URL = "/admin/login/"

# Agents and execution.
AGENT_HEARTBEAT_SECONDS = env.int("ORCH_AGENT_HEARTBEAT_SECONDS", default=5)
AGENT_STALE_SECONDS = env.int("ORCH_AGENT_STALE_SECONDS", default=30)
# An agent silent this long (stopped or dead) is retired: no longer listed nor counted by
# /api/status and /api/health, and its row is deleted by the recovery sweep.
AGENT_RETIRE_SECONDS = env.int("ORCH_AGENT_RETIRE_SECONDS", default=600)
# An agent whose worker stops on an error of its own restarts itself, once it had run this long.
AGENT_RESTART_MIN_UPTIME_SECONDS = env.float("ORCH_AGENT_RESTART_MIN_UPTIME_SECONDS", default=10.0)
TASK_LOG_MAX_BYTES = env.int("ORCH_TASK_LOG_MAX_BYTES", default=1024 * 1024)
DEFAULT_TASK_QUEUE = env.str("ORCH_DEFAULT_TASK_QUEUE", default="default")
TASK_LOG_FLUSH_SECONDS = env.float("ORCH_TASK_LOG_FLUSH_SECONDS", default=0.5)
# Following a task run's output (GET /api/tasks/{id}/logs/stream): bytes per second and per
# connection sent to one follower, and how often the stream looks for new lines.
LOG_STREAM_BYTES_PER_SECOND = env.int("ORCH_LOG_STREAM_BYTES_PER_SECOND", default=64 * 1024)
LOG_STREAM_MAX_BYTES = env.int("ORCH_LOG_STREAM_MAX_BYTES", default=8 * 1024 * 1024)
LOG_STREAM_POLL_SECONDS = env.float("ORCH_LOG_STREAM_POLL_SECONDS", default=0.3)
TASK_CANCEL_POLL_SECONDS = env.float("ORCH_TASK_CANCEL_POLL_SECONDS", default=0.5)
TASK_CANCEL_GRACE_SECONDS = env.float("ORCH_TASK_CANCEL_GRACE_SECONDS", default=5.0)
# Every agent tries the recovery sweep this often; one sweep per interval runs (a database lock).
SWEEP_INTERVAL_SECONDS = env.float("ORCH_SWEEP_INTERVAL_SECONDS", default=5.0)
# /api/status is `degraded` when no sweep finished within this long (no agent alive to run it).
SWEEP_OVERDUE_SECONDS = env.float("ORCH_SWEEP_OVERDUE_SECONDS", default=SWEEP_INTERVAL_SECONDS * 3)
# Celery's Django fixup closes the database connection after every task unless this is set; agents
# instead keep it and let Django's CONN_MAX_AGE/health checks decide (see orchestrator.runs.tasks).
CELERY_DB_REUSE_MAX = env.int("ORCH_CELERY_DB_REUSE_MAX", default=1000)
# The agents' claim and completion statements are prepared once per connection (shared.prepared);
# off for a connection pooler in transaction mode that does not keep prepared statements.
DB_PREPARED_STATEMENTS = env.bool("ORCH_DB_PREPARED_STATEMENTS", default=True)

# /api/metrics: tasks_per_minute counts task runs finished within this trailing window.
METRICS_WINDOW_SECONDS = env.int("ORCH_METRICS_WINDOW_SECONDS", default=300)

# Webhooks.
FIELD_ENCRYPTION_KEYS = env.list("ORCH_FIELD_ENCRYPTION_KEYS", default=[])
WEBHOOK_ALLOW_PRIVATE_TARGETS = env.bool("ORCH_WEBHOOK_ALLOW_PRIVATE_TARGETS", default=False)
WEBHOOK_TIMEOUT_SECONDS = env.float("ORCH_WEBHOOK_TIMEOUT_SECONDS", default=10.0)
WEBHOOK_MAX_ATTEMPTS = env.int("ORCH_WEBHOOK_MAX_ATTEMPTS", default=5)
WEBHOOK_RETRY_BASE_SECONDS = env.float("ORCH_WEBHOOK_RETRY_BASE_SECONDS", default=2.0)
WEBHOOK_DISPATCH_INTERVAL_SECONDS = env.float("ORCH_WEBHOOK_DISPATCH_INTERVAL_SECONDS", default=2.0)
WEBHOOK_DISPATCH_BATCH_SIZE = env.int("ORCH_WEBHOOK_DISPATCH_BATCH_SIZE", default=200)
WEBHOOK_SWEEP_GRACE_SECONDS = env.float("ORCH_WEBHOOK_SWEEP_GRACE_SECONDS", default=30.0)
# Audit checkpoints (orchestrator/audit/checkpoints.py): Ed25519 keys as `<key id>:<base64 32-byte
# seed>`, comma-separated; the first signs, all verify (rotate by putting a new key first). Required
# in production; the embedded default and tests derive one from SECRET_KEY. The recovery sweep signs
# the chain's head once EVERY_EVENTS events lie past the last checkpoint or the oldest of them is
# INTERVAL old. Witnesses: a file (one JSON line per checkpoint) and/or a URL (POST, through the
# webhooks' outbound address guard).
AUDIT_SIGNING_KEYS = env.list("ORCH_AUDIT_SIGNING_KEYS", default=[])
if AUDIT_SIGNING_KEYS:
    audit_signing.parse_keys(AUDIT_SIGNING_KEYS)  # a malformed key stops the process at start
AUDIT_CHECKPOINT_EVERY_EVENTS = env.int("ORCH_AUDIT_CHECKPOINT_EVERY_EVENTS", default=1000)
AUDIT_CHECKPOINT_INTERVAL_SECONDS = env.float("ORCH_AUDIT_CHECKPOINT_INTERVAL_SECONDS", default=600.0)
AUDIT_WITNESS_FILE = env.str("ORCH_AUDIT_WITNESS_FILE", default="")
AUDIT_WITNESS_URL = env.str("ORCH_AUDIT_WITNESS_URL", default="")
# Time schedules. Every agent on the control queue ticks the scheduler (a thread beside its
# heartbeat) unless ORCH_SCHEDULER_IN_AGENTS is off; `manage_orch.py run_scheduler` ticks too.
SCHEDULER_TICK_SECONDS = env.float("ORCH_SCHEDULER_TICK_SECONDS", default=5.0)
SCHEDULER_IN_AGENTS = env.bool("ORCH_SCHEDULER_IN_AGENTS", default=True)
SCHEDULER_MISFIRE_GRACE_SECONDS = env.float("ORCH_SCHEDULER_MISFIRE_GRACE_SECONDS", default=60.0)
SCHEDULER_BATCH_SIZE = env.int("ORCH_SCHEDULER_BATCH_SIZE", default=100)

# Outbox events (orch_events_event) older than this many days are deleted by the recovery sweep, in
# batches (webhooks.services.events_prune); undelivered events and those with deliveries stay. 0 keeps all.
EVENT_RETENTION_DAYS = env.int("ORCH_EVENT_RETENTION_DAYS", default=30)

CELERY_BEAT_SCHEDULE = {
    "webhooks-sweep": {
        "task": "orchestrator.webhooks.webhooks_sweep",
        "schedule": WEBHOOK_DISPATCH_INTERVAL_SECONDS,
        "options": {"expires": WEBHOOK_DISPATCH_INTERVAL_SECONDS * 5},
    },
    "recovery-sweep": {
        "task": "orchestrator.system.recovery_sweep",
        "schedule": SWEEP_INTERVAL_SECONDS,
        "options": {"expires": SWEEP_INTERVAL_SECONDS * 2},
    },
}
# `restore` also loads the dump into this empty database when set (or given as --database-url); the
# URL may carry a password, so an environment variable keeps it off command lines.
RESTORE_DATABASE_URL = env.str("ORCH_RESTORE_DATABASE_URL", default="")

LANGUAGE_CODE = "en"
LANGUAGES = conf.LANGUAGES
# Ahead of the installed apps' catalogues (DRF's German "Created" is not the console's word).
LOCALE_PATHS = conf.locale_paths("orchestrator")
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
LOGIN_REDIRECT_URL = "/api/status"

LOGGING = conf.logging_config(env.str("ORCH_LOG_LEVEL", default="INFO"))
# An agent records every task run in the database (status, times, exit code, output): Celery's own
# two lines per message ("received", "succeeded in") only repeat that, and writing them cost a few
# per cent of an agent's throughput (docs/benchmarks.md). They show at ORCH_LOG_LEVEL=DEBUG.
for _per_message in ("celery.app.trace", "celery.worker.strategy"):
    LOGGING["loggers"][_per_message] = {
        "level": "DEBUG" if LOGGING["root"]["level"] == "DEBUG" else "WARNING"
    }
PROMETHEUS_METRIC_NAMESPACE = ""

# Security headers (Django's SecurityMiddleware and XFrameOptionsMiddleware; HTML pages also get a
# CSP from shared.web.middleware): HSTS on HTTPS responses only (behind a TLS proxy that sets
# X-Forwarded-Proto in production), nosniff, same-origin referrers, no framing.
SECURE_HSTS_SECONDS = env.int("ORCH_HSTS_SECONDS", default=365 * 24 * 3600)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
