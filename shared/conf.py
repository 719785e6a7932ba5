"""Settings pieces both services compose in their own `config/settings/*.py`.

One place reads the environment per service (its base.py); these helpers only shape values.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

ROOT_DIR = Path(__file__).resolve().parent.parent


def isolation_prefix() -> str:
    """Keeps parallel test processes (xdist workers, concurrent runs) off each other's Redis keys
    and Celery queues. Empty outside tests."""
    run = os.environ.get("TEST_RUN_TOKEN", "")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return f"{run}{worker}:" if (run or worker) else ""


def rest_framework(authentication_classes: list[str]) -> dict[str, Any]:
    return {
        "DEFAULT_AUTHENTICATION_CLASSES": authentication_classes,
        "DEFAULT_PERMISSION_CLASSES": ["shared.auth.permissions.RequiredPermission"],
        # JSON only (415 otherwise); an upload view declares MultiPartParser itself.
        "DEFAULT_PARSER_CLASSES": ["shared.api.parsers.StrictJSONParser"],
        "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
        "DEFAULT_CONTENT_NEGOTIATION_CLASS": "shared.api.negotiation.JSONFirstNegotiation",
        # No `?format=` renderer override: an undeclared query parameter is ignored, and with it
        # `/cases?format=csv` answered 404 (the exports read their own, declared `format`).
        "URL_FORMAT_OVERRIDE": None,
        "EXCEPTION_HANDLER": "shared.api.handler.exception_handler",
        "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
        "DEFAULT_SCHEMA_CLASS": "shared.api.schema.AutoSchema",
        "DEFAULT_PAGINATION_CLASS": None,
    }


def logging_config(level: str = "INFO", *, json_logs: bool = False) -> dict[str, Any]:
    fmt = "%(asctime)s %(levelname)-7s %(name)s [%(request_id)s] %(message)s"
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request_id": {"()": "shared.api.middleware.RequestIDLogFilter"}},
        "formatters": {"plain": {"format": fmt}},
        "handlers": {
            "console": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["request_id"]},
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            "django.server": {"level": "WARNING"},
            "daphne": {"level": "WARNING"},
            # uvicorn logs each WebSocket handshake with its query string, where a token may be.
            "uvicorn.error": {"level": "WARNING"},
            "uvicorn.access": {"level": "WARNING"},
            "celery": {"level": level},
        },
    }


# How often a worker on the embedded filesystem broker looks for work when it found none, or when
# its prefetch limit (one message per pool process) is full. kombu's default, 1 s, paced a worker
# at about two jobs a second whatever they cost: it slept a whole second each time both processes
# were busy, however short their jobs, and an erasure waited 54 s behind 110 welcome emails
# (bench/embedded_queue.py; docs/benchmarks.md). An idle poll lists one small folder per queue.
FILESYSTEM_BROKER_POLL_SECONDS = 0.05


def broker_transport(broker_url: str) -> str | None:
    """Our subclasses of kombu's transports: Redis's reusing its clients and surviving the loss of
    its connection (shared/broker.py); the filesystem's writing and claiming messages atomically
    (shared/embedded_broker.py). None lets the URL choose."""
    if broker_url.startswith(("redis://", "rediss://")):
        return "shared.broker:Transport"
    if broker_url.startswith("filesystem://"):
        return "shared.embedded_broker:Transport"
    return None


def broker_transport_options(broker_url: str, local_folder: Path) -> dict[str, Any]:
    """Celery broker transport options. The embedded filesystem broker keeps every file it writes
    (queued messages, processed ones, and the `control/*.exchange` tables that route broadcasts)
    under `local_folder`; kombu would otherwise put the exchange tables in the process's working
    directory. Redis keys carry the test isolation prefix."""
    if broker_url.startswith("filesystem://"):
        for folder in (local_folder, local_folder / "processed", local_folder / "control"):
            folder.mkdir(parents=True, exist_ok=True)
        return {
            "data_folder_in": str(local_folder),
            "data_folder_out": str(local_folder),
            "processed_folder": str(local_folder / "processed"),
            "control_folder": str(local_folder / "control"),
            "store_processed": False,
            "polling_interval": FILESYSTEM_BROKER_POLL_SECONDS,
        }
    if broker_url.startswith(("redis://", "rediss://")):
        return {"global_keyprefix": isolation_prefix(), "visibility_timeout": 3600}
    return {}


def redis_cache(url: str, prefix: str) -> dict[str, Any]:
    return {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": url,
        "KEY_PREFIX": isolation_prefix() + prefix,
    }


# channels_redis waits for messages with a blocking pop of this many seconds (its brpop_timeout).
CHANNEL_LAYER_BLOCK_SECONDS = 5
# Connections per event loop (a web process runs one) and how long a command waits for a free one.
# 1,000 sockets closing at once queue their group removals on these instead of failing past the
# pool's limit; each takes well under a millisecond, so the queue drains in about a second.
CHANNEL_LAYER_MAX_CONNECTIONS = 50
CHANNEL_LAYER_POOL_WAIT_SECONDS = 10
# A channel leaves its group when its socket closes; one whose removal never happened (the process
# was killed, Redis was unreachable through every retry) is dropped once its membership is this old.
# An open socket renews its membership every CHANNEL_GROUP_RENEW_SECONDS, so it never ages out.
CHANNEL_GROUP_EXPIRY_SECONDS = 900
CHANNEL_GROUP_RENEW_SECONDS = 300


def redis_channel_layer(url: str, prefix: str) -> dict[str, Any]:
    """The Redis channel layer for WebSockets (`shared.channel_layer`: a bounded pool that waits).
    redis-py reads with a 5 s socket timeout by default, the same as the layer's blocking pop: an
    idle socket's read then timed out before Redis answered "nothing", the consumer died with
    "Timeout reading", the browser reconnected, and what was sent in between was lost. The read
    timeout is now well above the pop's, and still bounded, so a broker that stops answering is
    noticed."""
    host = {
        "address": url,
        "socket_timeout": CHANNEL_LAYER_BLOCK_SECONDS * 4,
        "socket_connect_timeout": 5,
        "health_check_interval": 30,
        "max_connections": CHANNEL_LAYER_MAX_CONNECTIONS,
        "timeout": CHANNEL_LAYER_POOL_WAIT_SECONDS,
    }
    return {
        "BACKEND": "shared.channel_layer.RedisChannelLayer",
        "CONFIG": {
            "hosts": [host],
            "prefix": isolation_prefix() + prefix,
            "group_expiry": CHANNEL_GROUP_EXPIRY_SECONDS,
        },
    }


CORE_APPS = [
    # shared.web comes first so its admin/base_site.html (the product's name) overrides Django's.
    "shared.web",
    "shared.web.apps.BrandedAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_prometheus",
]

MIDDLEWARE = [
    "shared.web.middleware.ClientAddressMiddleware",
    "shared.web.metrics.PrometheusBeforeMiddleware",
    "shared.api.middleware.RequestIDMiddleware",
    "shared.api.middleware.ChunkedBodyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "shared.web.middleware.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "shared.web.i18n.PreferredLocaleMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "shared.web.metrics.PrometheusAfterMiddleware",
]

# The stack of a JSON API whose browser pages (the admin site, a console) live under known paths:
# sessions, CSRF, session login and messages run only there (shared.web.middleware.BrowserOnlyMiddleware,
# with BROWSER_PATH_PREFIXES in the service's settings).
BROWSER_MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "shared.web.i18n.PreferredLocaleMiddleware",
]
API_MIDDLEWARE = [
    "shared.web.middleware.ClientAddressMiddleware",
    "shared.web.metrics.PrometheusBeforeMiddleware",
    "shared.api.middleware.RequestIDMiddleware",
    "shared.api.middleware.ChunkedBodyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "shared.web.middleware.ContentSecurityPolicyMiddleware",
    "django.middleware.common.CommonMiddleware",
    "shared.web.middleware.BrowserOnlyMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "shared.web.metrics.PrometheusAfterMiddleware",
]

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]


# The languages the consoles and the admin site are translated into (the `locale/` folders of
# casemgmt.console, orchestrator.console and shared.web; Django's own apps bring theirs).
LANGUAGES = [("en", "English"), ("de", "Deutsch")]


def locale_paths(service: str) -> list[Path]:
    """The service's console catalogue and the shared one, which take precedence over the other
    installed apps' (Django prefers LOCALE_PATHS; among apps, the first listed)."""
    return [ROOT_DIR / service / "console" / "locale", ROOT_DIR / "shared" / "web" / "locale"]


def database(config: dict[str, Any], *, conn_max_age: int) -> dict[str, Any]:
    """Shapes a parsed database URL: metrics-wrapped PostgreSQL (`shared.db.postgresql`) with a
    connect timeout, or SQLite tuned for a web process and a worker writing at once (WAL, immediate
    transactions)."""
    config = dict(config, ATOMIC_REQUESTS=False, CONN_MAX_AGE=conn_max_age)
    options = config.setdefault("OPTIONS", {})
    if config["ENGINE"] == "django.db.backends.postgresql":
        config["ENGINE"] = "shared.db.postgresql"  # django-prometheus's metrics, cheaper
        options["connect_timeout"] = 5
        # No JIT: it compiles any query the planner deems costly (dashboards, broad searches) and the
        # compilation alone took ~70 ms per request on a million cases, more than it ever saves on
        # these short queries.
        options["options"] = "-c jit=off"
    elif config["ENGINE"] == "django.db.backends.sqlite3":
        options.update(
            {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
        )
    return config


def require_production(settings: dict[str, Any], prefix: str, *, required: tuple[str, ...] = ()) -> None:
    """Production refuses to start without its secrets, Redis and PostgreSQL, and with a wildcard
    `ALLOWED_HOSTS` (the Host header would then be trusted for absolute URLs and cache keys).
    `required` names further settings (read from `<prefix>_<name>`) that must not be empty."""
    from django.core.exceptions import ImproperlyConfigured

    checks = [
        (settings["SECRET_KEY"], f"{prefix}_SECRET_KEY must be set in production."),
        (settings["REDIS_URL"], f"{prefix}_REDIS_URL must be set in production."),
        (
            "sqlite" not in settings["DATABASES"]["default"]["ENGINE"],
            f"{prefix}_DATABASE_URL must point at PostgreSQL in production.",
        ),
        (
            settings["ALLOWED_HOSTS"] and "*" not in settings["ALLOWED_HOSTS"],
            f"{prefix}_ALLOWED_HOSTS must list the service's host names in production (not `*`).",
        ),
        *((settings[name], f"{prefix}_{name} must be set in production.") for name in required),
    ]
    for ok, message in checks:
        if not ok:
            raise ImproperlyConfigured(message)


def use_connection_pool(config: dict[str, Any], *, max_size: int, timeout: float) -> None:
    """Under ASGI each request's sync code runs in a fresh thread, so per-thread persistent
    connections are never reused (a new PostgreSQL connection per request, until the server runs out
    of slots). Django's psycopg pool fixes that; `max_size=0` leaves persistent connections in charge."""
    if max_size > 0:
        config["CONN_MAX_AGE"] = 0
        config.setdefault("OPTIONS", {})["pool"] = {"min_size": 1, "max_size": max_size, "timeout": timeout}


def with_static_files(app: Any) -> Any:
    """Embedded default (SERVE_STATIC): the ASGI app serves collected-on-the-fly static files itself
    (the Django admin's), since DEBUG stays off and no web server fronts it."""
    from django.conf import settings

    if getattr(settings, "SERVE_STATIC", False):
        from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

        return ASGIStaticFilesHandler(app)
    return app
