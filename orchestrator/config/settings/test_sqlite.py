"""Tests of the embedded default that `make run` uses: the local settings (SQLite file database in
WAL mode with immediate transactions, filesystem broker, file cache), moved into a folder per test
process so that they never touch a development server's database or broker."""

import os

from shared import conf
from shared.audit.signing import derived_key_entry

from .local import *  # noqa: F401,F403
from .local import BASE_DIR, JWT, env

VAR_DIR = BASE_DIR / "var" / "test-sqlite" / "orch" / (os.environ.get("PYTEST_XDIST_WORKER") or "main")
VAR_DIR.mkdir(parents=True, exist_ok=True)

# This suite is about SQLite and the embedded broker and cache, whatever the environment says
# (ORCH_REDIS_URL, a PostgreSQL ORCH_DATABASE_URL). A SQLite ORCH_DATABASE_URL is how a test points
# an agent process at its test database.
REDIS_URL = ""
_URL = env.str("ORCH_DATABASE_URL", default="")
DATABASES = {
    "default": conf.database(
        {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": env.db_url_config(_URL)["NAME"]
            if _URL.startswith("sqlite:")
            else str(VAR_DIR / "orch.sqlite3"),
            # A file, not Django's default in-memory test database: concurrency tests need the
            # file's locking (WAL, busy timeout), as the development server has it.
            "TEST": {"NAME": str(VAR_DIR / "test-orch.sqlite3")},
        },
        conn_max_age=0,
    )
}
CELERY_BROKER_URL = "filesystem://"
CELERY_BROKER_TRANSPORT_OPTIONS = conf.broker_transport_options(CELERY_BROKER_URL, VAR_DIR / "broker")
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": str(VAR_DIR / "cache"),
    }
}

SECRET_KEY = "test-secret-key-not-for-production"  # noqa: S105 - tests only
JWT["SIGNING_KEY"] = SECRET_KEY
FIELD_ENCRYPTION_KEYS = ["dGVzdC1vbmx5LWZlcm5ldC1rZXktMzItYnl0ZXMtISE="]
AUDIT_SIGNING_KEYS = [derived_key_entry(SECRET_KEY, key_id="test")]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STATIC_ROOT = VAR_DIR / "static"
DEBUG = False
ORCH_SECURITY_ENABLED = False
# Webhook tests register receivers on 127.0.0.1.
WEBHOOK_ALLOW_PRIVATE_TARGETS = True
