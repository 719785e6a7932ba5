"""Case service settings. The only module that reads the environment."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import environ
from django.core.exceptions import ImproperlyConfigured

from casemgmt.config import api_docs
from shared import conf
from shared.audit import signing as audit_signing
from shared.web import clientip

BASE_DIR = conf.ROOT_DIR
env = environ.Env()
VAR_DIR = Path(env.str("CASE_VAR_DIR", default=str(BASE_DIR / "var" / "case")))

SERVICE_NAME = "casemgmt"
SERVICE_VERSION = "0.1.0"
PRODUCT_NAME = "Case Management"  # shown in the Django admin's header and title
ADMIN_CONTEXT = "casemgmt.tenancy.admin.site_context"  # the tenant's branding in the Django admin
SECRET_KEY = env.str("CASE_SECRET_KEY", default="")
DEBUG = env.bool("CASE_DEBUG", default=False)
ALLOWED_HOSTS = env.list("CASE_ALLOWED_HOSTS", default=["*"])
CSRF_TRUSTED_ORIGINS = env.list("CASE_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "daphne",
    *conf.CORE_APPS,
    "channels",
    "casemgmt.tenancy",
    "casemgmt.accounts",
    "casemgmt.audit",
    "casemgmt.cases",
    "casemgmt.workflows",
    "casemgmt.prompts",
    "casemgmt.reports",
    "casemgmt.connectors",
    "casemgmt.dags",
    "casemgmt.vault",
    "casemgmt.webhooks",
    "casemgmt.notifications",
    "casemgmt.ops",
    "casemgmt.realtime",
    "casemgmt.console",
]

# Row-level security ends last: its switch back runs once the response (or its stream) is done.
MIDDLEWARE = [*conf.API_MIDDLEWARE, "casemgmt.tenancy.middleware.RowLevelSecurityMiddleware"]
BROWSER_MIDDLEWARE = conf.BROWSER_MIDDLEWARE
BROWSER_PATH_PREFIXES = ["/admin/", "/console/"]
# The admin's checks look for sessions, session login and messages in MIDDLEWARE itself; they run
# inside BrowserOnlyMiddleware for /admin/ instead.
SILENCED_SYSTEM_CHECKS = ["admin.E408", "admin.E409", "admin.E410"]

ROOT_URLCONF = "casemgmt.config.urls"
ASGI_APPLICATION = "casemgmt.config.asgi.application"
APPEND_SLASH = False
AUTH_USER_MODEL = "accounts.User"
AUTHENTICATION_BACKENDS = ["casemgmt.accounts.backends.EmailBackend"]

TEMPLATES = conf.TEMPLATES

DATABASES = {
    "default": conf.database(
        env.db_url("CASE_DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'case.sqlite3'}"),
        conn_max_age=env.int("CASE_DB_CONN_MAX_AGE", default=0),
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Redis: the case service uses databases 0 (broker), 1 (cache), 2 (channels) by default so that it
# never collides with the orchestrator (3, 4), and prefixes every key with "case:".
REDIS_URL = env.str("CASE_REDIS_URL", default="")
CELERY_DEFAULT_QUEUE = "case.default"
CELERY_BROKER_URL = env.str("CASE_BROKER_URL", default=f"{REDIS_URL}/0" if REDIS_URL else "filesystem://")
CELERY_BROKER_TRANSPORT_OPTIONS = conf.broker_transport_options(CELERY_BROKER_URL, VAR_DIR / "broker")
CELERY_BROKER_TRANSPORT = conf.broker_transport(CELERY_BROKER_URL)
CELERY_TASK_DEFAULT_QUEUE = CELERY_DEFAULT_QUEUE
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
# A task is acknowledged after it ran and requeued when its worker dies, so a crash never loses one
# (every task is idempotent); one message prefetched per process keeps long tasks from starving others.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 15 * 60
CELERY_TASK_SOFT_TIME_LIMIT = 14 * 60
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_TIMEZONE = "UTC"
# `run_worker`: a worker that stops on an error of its own after running this long starts again.
WORKER_RESTART_MIN_UPTIME_SECONDS = env.float("CASE_WORKER_RESTART_MIN_UPTIME_SECONDS", default=10.0)
if REDIS_URL:
    CACHES = {"default": conf.redis_cache(f"{REDIS_URL}/1", "case:")}
    CHANNEL_LAYERS = {"default": conf.redis_channel_layer(f"{REDIS_URL}/2", "case:asgi")}
else:
    # Embedded default: a file cache shared by the web and worker processes, in-memory channels.
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

REST_FRAMEWORK = conf.rest_framework(
    ["casemgmt.accounts.authentication.BearerAuthentication"],
)
# Per-tenant rate limits (casemgmt/tenancy/throttling.py): requests per second/min/hour/day for one
# tenant on case search, audit exports and report queries (run, ask); empty: unlimited.
REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] = {
    "tenant-search": env.str("CASE_THROTTLE_SEARCH", default="120/min") or None,
    "tenant-export": env.str("CASE_THROTTLE_EXPORT", default="10/min") or None,
    "tenant-report-query": env.str("CASE_THROTTLE_REPORT_QUERY", default="30/min") or None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Case service API",
    "VERSION": SERVICE_VERSION,
    "SERVE_INCLUDE_SCHEMA": False,
    # Redoc from the pinned copy in drf-spectacular-sidecar, served by the service: no CDN.
    "REDOC_DIST": "SIDECAR",
    # Error responses and the strings the parser refuses, added to every operation alike.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "casemgmt.config.openapi_routes.add_routes",
        "shared.api.openapi.postprocess",
    ],
    "COMPONENT_SPLIT_REQUEST": True,
    # What the document says to people (config/api_docs.py): the introduction and the resources.
    "DESCRIPTION": api_docs.DESCRIPTION,
    "TAGS": api_docs.TAGS,
}
# Operation ids and tags, given centrally by shared.api.schema.AutoSchema rather than per view.
API_DOCS_TAG_PATHS = api_docs.TAG_PATHS
API_DOCS_OPERATION_IDS = api_docs.OPERATION_IDS

JWT = {
    "SIGNING_KEY": env.str("CASE_JWT_SIGNING_KEY", default="") or SECRET_KEY,
    "ISSUER": env.str("CASE_JWT_ISSUER", default="casemgmt"),
    "AUDIENCE": env.str("CASE_JWT_AUDIENCE", default="casemgmt"),
    "LIFETIME": timedelta(seconds=env.int("CASE_JWT_LIFETIME_SECONDS", default=3600)),
}
AUTH_LOCKOUT_EMAIL_FAILURES = env.int("CASE_AUTH_LOCKOUT_EMAIL_FAILURES", default=5)
AUTH_LOCKOUT_IP_FAILURES = env.int("CASE_AUTH_LOCKOUT_IP_FAILURES", default=20)
AUTH_LOCKOUT_WINDOW_SECONDS = env.int("CASE_AUTH_LOCKOUT_WINDOW_SECONDS", default=15 * 60)
# The time a request's headers and body may take to arrive: this many seconds, plus one second for
# every REQUEST_BODY_MIN_RATE bytes of body received (0: no allowance); later, 408. 0 turns it off.
REQUEST_BODY_TIMEOUT_SECONDS = env.float("CASE_REQUEST_BODY_TIMEOUT_SECONDS", default=30.0)
REQUEST_BODY_MIN_RATE = env.int("CASE_REQUEST_BODY_MIN_RATE", default=1024)
# Reverse proxies whose X-Forwarded-For is believed (addresses and CIDR ranges); the client is the
# right-most address of the chain that is not one of them (shared/web/clientip.py).
TRUSTED_PROXIES = clientip.trusted_networks(
    env.list("CASE_TRUSTED_PROXIES", default=[]), setting="CASE_TRUSTED_PROXIES"
)
if "CASE_AUTH_TRUST_X_FORWARDED_FOR" in env.ENVIRON:
    # It believed the left-most address, which any client writes; refusing to start beats a lockout
    # silently keyed on the proxy's address after an upgrade.
    raise ImproperlyConfigured("CASE_AUTH_TRUST_X_FORWARDED_FOR was replaced by CASE_TRUSTED_PROXIES")
# Queue of the welcome-email task (defaults to the service's default queue).
ACCOUNTS_EMAIL_QUEUE = env.str("CASE_ACCOUNTS_EMAIL_QUEUE", default=CELERY_DEFAULT_QUEUE)
# One-time password-setting links in welcome emails stay valid this long.
PASSWORD_RESET_TIMEOUT = env.int("CASE_PASSWORD_SET_TIMEOUT_SECONDS", default=3 * 24 * 3600)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

EMAIL_BACKEND = env.str("CASE_EMAIL_BACKEND", default="django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = env.str("CASE_EMAIL_HOST", default="localhost")
EMAIL_PORT = env.int("CASE_EMAIL_PORT", default=25)
EMAIL_HOST_USER = env.str("CASE_EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env.str("CASE_EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env.bool("CASE_EMAIL_USE_TLS", default=False)
EMAIL_TIMEOUT = env.int("CASE_EMAIL_TIMEOUT", default=10)
DEFAULT_FROM_EMAIL = env.str("CASE_DEFAULT_FROM_EMAIL", default="no-reply@casemgmt.local")
PUBLIC_BASE_URL = env.str("CASE_PUBLIC_BASE_URL", default="http://localhost:8000")

# Fernet keys for connector credentials at rest (comma-separated; the first encrypts, all decrypt,
# so a key is rotated by putting a new one first). Required in production.
FIELD_ENCRYPTION_KEYS = env.list("CASE_FIELD_ENCRYPTION_KEYS", default=[])

# Connectors: outbound calls (SSRF allow-list, timeouts, response cap), retries and their queue.
# Hosts (exact names, `*.example.com`, addresses or CIDR networks) connectors may reach even though
# they resolve to loopback, private or link-local addresses. Metadata addresses stay refused.
CONNECTOR_ALLOWED_HOSTS = env.list("CASE_CONNECTOR_ALLOWED_HOSTS", default=[])
CONNECTOR_TIMEOUT_SECONDS = env.float("CASE_CONNECTOR_TIMEOUT_SECONDS", default=10.0)
CONNECTOR_MAX_TIMEOUT_SECONDS = env.float("CASE_CONNECTOR_MAX_TIMEOUT_SECONDS", default=60.0)
CONNECTOR_MAX_RESPONSE_BYTES = env.int("CASE_CONNECTOR_MAX_RESPONSE_BYTES", default=1024 * 1024)
# Retries after the first attempt of a connector step or outbound delivery (a step's `retries`
# overrides it); the waits double from the base up to the cap.
CONNECTOR_RETRIES = env.int("CASE_CONNECTOR_RETRIES", default=3)
CONNECTOR_RETRY_BASE_SECONDS = env.float("CASE_CONNECTOR_RETRY_BASE_SECONDS", default=1.0)
CONNECTOR_RETRY_MAX_SECONDS = env.float("CASE_CONNECTOR_RETRY_MAX_SECONDS", default=60.0)
CONNECTOR_QUEUE = env.str("CASE_CONNECTOR_QUEUE", default=CELERY_DEFAULT_QUEUE)
# How long one attempt may run before the sweep counts its worker as lost and starts the next
# attempt: keep it above the longest call (six redirect hops at the maximum timeout).
CONNECTOR_ATTEMPT_LEASE_SECONDS = env.float(
    "CASE_CONNECTOR_ATTEMPT_LEASE_SECONDS", default=6 * CONNECTOR_MAX_TIMEOUT_SECONDS + 30
)
CONNECTOR_SWEEP_SECONDS = env.float("CASE_CONNECTOR_SWEEP_SECONDS", default=30.0)

LLM_BASE_URL = env.str("CASE_LLM_BASE_URL", default="")
LLM_API_KEY = env.str("CASE_LLM_API_KEY", default="")
LLM_MODEL = env.str("CASE_LLM_MODEL", default="")
LLM_TIMEOUT_SECONDS = env.float("CASE_LLM_TIMEOUT_SECONDS", default=30.0)
# Workflows: agent-step retries, the queue agent steps run on, the SLA scan.
LLM_MAX_ATTEMPTS = env.int("CASE_LLM_MAX_ATTEMPTS", default=3)
LLM_RETRY_BASE_SECONDS = env.float("CASE_LLM_RETRY_BASE_SECONDS", default=1.0)
LLM_RETRY_MAX_SECONDS = env.float("CASE_LLM_RETRY_MAX_SECONDS", default=60.0)
WORKFLOW_AGENT_QUEUE = env.str("CASE_WORKFLOW_AGENT_QUEUE", default=CELERY_DEFAULT_QUEUE)
WORKFLOW_SLA_SCAN_SECONDS = env.float("CASE_WORKFLOW_SLA_SCAN_SECONDS", default=60.0)
# `timer` steps: how often the beat looks for timers whose time has come (they fire within it).
WORKFLOW_TIMER_SCAN_SECONDS = env.float("CASE_WORKFLOW_TIMER_SCAN_SECONDS", default=15.0)
# `dag` steps: the queue their calls to the orchestrator run on; how long a run may go without a
# callback before the poll asks the orchestrator, and then how often; how far a callback's signed
# timestamp may be from now (older or newer callbacks are refused).
DAG_QUEUE = env.str("CASE_DAG_QUEUE", default=CELERY_DEFAULT_QUEUE)
DAG_POLL_AFTER_SECONDS = env.float("CASE_DAG_POLL_AFTER_SECONDS", default=300.0)
DAG_POLL_INTERVAL_SECONDS = env.float("CASE_DAG_POLL_INTERVAL_SECONDS", default=60.0)
DAG_POLL_SCAN_SECONDS = env.float("CASE_DAG_POLL_SCAN_SECONDS", default=30.0)
DAG_CALLBACK_WINDOW_SECONDS = env.int("CASE_DAG_CALLBACK_WINDOW_SECONDS", default=300)
# Safety-net jobs are named `<entity>_sweep`: each re-sends work whose message was lost.
CELERY_BEAT_SCHEDULE = {
    "dag-runs-sweep": {"task": "casemgmt.dags.dag_runs_sweep", "schedule": DAG_POLL_SCAN_SECONDS},
    "human-tasks-sweep": {
        "task": "casemgmt.workflows.human_tasks_sweep",
        "schedule": WORKFLOW_SLA_SCAN_SECONDS,
    },
    "llm-steps-sweep": {
        "task": "casemgmt.workflows.llm_steps_sweep",
        "schedule": WORKFLOW_SLA_SCAN_SECONDS,
    },
    # Timers fire within this many seconds of their time (at most 60).
    "due-steps-sweep": {
        "task": "casemgmt.workflows.due_steps_sweep",
        "schedule": WORKFLOW_TIMER_SCAN_SECONDS,
    },
    "accounts-purge-expired-security-state": {
        "task": "casemgmt.accounts.purge_expired_security_state",
        "schedule": 3600,
    },
    "deliveries-sweep": {
        "task": "casemgmt.connectors.deliveries_sweep",
        "schedule": CONNECTOR_SWEEP_SECONDS,
    },
}

# Task notification emails (assigned, escalated, SLA passed): the queue they are sent from, and how
# often (and after how long) rows still pending are handed to a worker again.
NOTIFICATIONS_QUEUE = env.str("CASE_NOTIFICATIONS_QUEUE", default=CELERY_DEFAULT_QUEUE)
NOTIFICATIONS_SCAN_SECONDS = env.float("CASE_NOTIFICATIONS_SCAN_SECONDS", default=300.0)
CELERY_BEAT_SCHEDULE["notifications-sweep"] = {
    "task": "casemgmt.notifications.notifications_sweep",
    "schedule": NOTIFICATIONS_SCAN_SECONDS,
}

# Audit checkpoints (casemgmt/audit/checkpoints.py): Ed25519 keys as `<key id>:<base64 32-byte
# seed>`, comma-separated; the first signs, all verify (rotate by putting a new key first). Required
# in production; the embedded default and tests derive one from SECRET_KEY. A tenant's chain gets a
# checkpoint once EVERY_EVENTS events lie past its last one or the oldest of them is INTERVAL old;
# the beat scan looks every SCAN seconds. Witnesses: a file (one JSON line per checkpoint) and/or a
# URL (POST, through the connectors' outbound address guard).
AUDIT_SIGNING_KEYS = env.list("CASE_AUDIT_SIGNING_KEYS", default=[])
if AUDIT_SIGNING_KEYS:
    audit_signing.parse_keys(AUDIT_SIGNING_KEYS)  # a malformed key stops the process at start
AUDIT_CHECKPOINT_EVERY_EVENTS = env.int("CASE_AUDIT_CHECKPOINT_EVERY_EVENTS", default=1000)
AUDIT_CHECKPOINT_INTERVAL_SECONDS = env.float("CASE_AUDIT_CHECKPOINT_INTERVAL_SECONDS", default=600.0)
AUDIT_CHECKPOINT_SCAN_SECONDS = env.float("CASE_AUDIT_CHECKPOINT_SCAN_SECONDS", default=60.0)
AUDIT_WITNESS_FILE = env.str("CASE_AUDIT_WITNESS_FILE", default="")
AUDIT_WITNESS_URL = env.str("CASE_AUDIT_WITNESS_URL", default="")
CELERY_BEAT_SCHEDULE["audit-checkpoints-sweep"] = {
    "task": "casemgmt.audit.checkpoints_sweep",
    "schedule": AUDIT_CHECKPOINT_SCAN_SECONDS,
}

# A new case always gets an slaDeadline: these hours apply when neither its case type, its workflow
# nor its tenant's own default sets them (1..87600).
CASE_DEFAULT_SLA_HOURS = env.int("CASE_DEFAULT_SLA_HOURS", default=72)
if not 1 <= CASE_DEFAULT_SLA_HOURS <= 87600:
    raise ImproperlyConfigured("CASE_DEFAULT_SLA_HOURS must be a whole number of hours from 1 to 87600.")

# Tenant isolation in the database (casemgmt/tenancy/rls.py): authenticated requests switch to this
# role (no table ownership, no BYPASSRLS), which row-level security policies bind. Empty: no switch
# (then only a service user that neither owns the tables nor is a superuser is bound).
TENANT_DB_ROLE = env.str("CASE_TENANT_DB_ROLE", default="casemgmt_tenant")

# Report queries: the PostgreSQL role they run as (only SELECT on the reporting views; empty: no
# role switch), their statement timeout and the most rows one answers.
REPORTS_DB_ROLE = env.str("CASE_REPORTS_DB_ROLE", default="casemgmt_report_reader")
REPORTS_STATEMENT_TIMEOUT_MS = env.int("CASE_REPORTS_STATEMENT_TIMEOUT_MS", default=5000)
REPORTS_ROW_CAP = env.int("CASE_REPORTS_ROW_CAP", default=10_000)

DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("CASE_MAX_JSON_BYTES", default=2 * 1024 * 1024)
# Largest body an inbound webhook delivery may carry; larger: 413.
WEBHOOK_MAX_BODY_BYTES = env.int("CASE_WEBHOOK_MAX_BODY_BYTES", default=1024 * 1024)
# A signed inbound delivery whose timestamp is further than this from now is refused (401).
WEBHOOK_SIGNATURE_WINDOW_SECONDS = env.int("CASE_WEBHOOK_SIGNATURE_WINDOW_SECONDS", default=300)
# Threads per web server process running the HTTP API (config/asgi.py); each holds at most one
# database connection, so keep it at or below CASE_DB_POOL_MAX_SIZE. Eight: four cost 5-15% less
# CPU per request (fewer GIL hand-overs), but a request waiting on a lock or a slow download holds
# its thread, and with four a few such requests stalled a whole process (the graceful-shutdown
# test's six held creations could not all get a thread); docs/benchmarks.md, serving layer.
WEB_THREADS = env.int("CASE_WEB_THREADS", default=8)
# The case read, list and create statements are prepared once per connection (shared.prepared):
# planning them costs PostgreSQL several times their execution. Off for a connection pooler in
# transaction mode that does not keep prepared statements.
DB_PREPARED_STATEMENTS = env.bool("CASE_DB_PREPARED_STATEMENTS", default=True)

# Document vault: blobs stored once per SHA-256 of their bytes, on the filesystem (default) or in an
# S3-compatible bucket.
VAULT_MAX_UPLOAD_BYTES = env.int("CASE_VAULT_MAX_UPLOAD_BYTES", default=25 * 1024 * 1024)
VAULT_SIGNED_URL_SECONDS = env.int("CASE_VAULT_SIGNED_URL_SECONDS", default=15 * 60)
VAULT_STORAGE = env.str("CASE_VAULT_STORAGE", default="filesystem")
VAULT_ROOT = Path(env.str("CASE_VAULT_ROOT", default=str(VAR_DIR / "vault")))
VAULT_S3_BUCKET = env.str("CASE_VAULT_S3_BUCKET", default="")
VAULT_S3_ENDPOINT_URL = env.str("CASE_VAULT_S3_ENDPOINT_URL", default="") or None
VAULT_S3_REGION = env.str("CASE_VAULT_S3_REGION", default="") or None
VAULT_S3_ACCESS_KEY_ID = env.str("CASE_VAULT_S3_ACCESS_KEY_ID", default="") or None
VAULT_S3_SECRET_ACCESS_KEY = env.str("CASE_VAULT_S3_SECRET_ACCESS_KEY", default="") or None
VAULT_S3_ADDRESSING_STYLE = env.str("CASE_VAULT_S3_ADDRESSING_STYLE", default="") or None
VAULT_STORAGE_BACKEND: dict[str, Any]
if VAULT_STORAGE == "filesystem":
    VAULT_STORAGE_BACKEND = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(VAULT_ROOT), "file_permissions_mode": 0o640},
    }
elif VAULT_STORAGE == "s3":
    if not VAULT_S3_BUCKET:
        raise ImproperlyConfigured("CASE_VAULT_S3_BUCKET must be set when CASE_VAULT_STORAGE is s3")
    VAULT_STORAGE_BACKEND = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": VAULT_S3_BUCKET,
            "endpoint_url": VAULT_S3_ENDPOINT_URL,
            "region_name": VAULT_S3_REGION,
            "access_key": VAULT_S3_ACCESS_KEY_ID,
            "secret_key": VAULT_S3_SECRET_ACCESS_KEY,
            "addressing_style": VAULT_S3_ADDRESSING_STYLE,
            "signature_version": "s3v4",
            "default_acl": None,
            "file_overwrite": True,  # content-addressed: the same name always holds the same bytes
            "querystring_auth": True,
            "querystring_expire": VAULT_SIGNED_URL_SECONDS,
        },
    }
else:
    raise ImproperlyConfigured("CASE_VAULT_STORAGE must be filesystem or s3")
# Erasure jobs: a job whose heartbeat is older than the lease is presumed abandoned (its worker died)
# and claimed again by the scan; after ERASURE_MAX_ATTEMPTS claims it is marked failed.
ERASURE_QUEUE = env.str("CASE_ERASURE_QUEUE", default=CELERY_DEFAULT_QUEUE)
ERASURE_LEASE_SECONDS = env.int("CASE_ERASURE_LEASE_SECONDS", default=300)
ERASURE_MAX_ATTEMPTS = env.int("CASE_ERASURE_MAX_ATTEMPTS", default=5)
ERASURE_RESUME_SCAN_SECONDS = env.float("CASE_ERASURE_RESUME_SCAN_SECONDS", default=60.0)
CELERY_BEAT_SCHEDULE["erasures-sweep"] = {
    "task": "casemgmt.vault.erasures_sweep",
    "schedule": ERASURE_RESUME_SCAN_SECONDS,
    "options": {"queue": ERASURE_QUEUE},
}
# A chunked request body (no Content-Length) is read whole by the web server before Django sees it;
# above this it is refused at once (413). Every limit the service applies itself is below it.
MAX_REQUEST_BODY_BYTES = (
    max(DATA_UPLOAD_MAX_MEMORY_SIZE, WEBHOOK_MAX_BODY_BYTES, VAULT_MAX_UPLOAD_BYTES) + 1024 * 1024
)
STORAGES: dict[str, dict[str, Any]] = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "vault": VAULT_STORAGE_BACKEND,
}
# `restore` also loads the dump into this empty database when set (or given as --database-url); the
# URL may carry a password, so an environment variable keeps it off command lines.
RESTORE_DATABASE_URL = env.str("CASE_RESTORE_DATABASE_URL", default="")

LANGUAGE_CODE = "en"
LANGUAGES = conf.LANGUAGES
# Ahead of the installed apps' catalogues (DRF's German "Created" is not the console's word).
LOCALE_PATHS = conf.locale_paths("casemgmt")
# Console and admin pages follow the signed-in user's stored language and zone (shared/web/i18n.py).
USER_LOCALE = "casemgmt.accounts.selectors.locale_of"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
MEDIA_ROOT = Path(env.str("CASE_MEDIA_ROOT", default=str(VAR_DIR / "media")))

LOGGING = conf.logging_config(env.str("CASE_LOG_LEVEL", default="INFO"))
# urllib3 logs request lines (URL with its query) at DEBUG; connector URLs may carry credentials
# (webhook URLs, tokens in queries), and connectors log their calls themselves, redacted.
LOGGING["loggers"]["urllib3"] = {"level": "WARNING"}
PROMETHEUS_METRIC_NAMESPACE = ""

# Security headers (Django's SecurityMiddleware and XFrameOptionsMiddleware; HTML pages also get a
# CSP from shared.web.middleware): HSTS on HTTPS responses only (behind a TLS proxy that sets
# X-Forwarded-Proto in production), nosniff, same-origin referrers, no framing.
SECURE_HSTS_SECONDS = env.int("CASE_HSTS_SECONDS", default=365 * 24 * 3600)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
