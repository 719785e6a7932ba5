"""Tests of the embedded default that `make run` uses: the local settings (SQLite file database in
WAL mode with immediate transactions, filesystem broker, file cache, in-memory channels), moved into
a folder per test process so that they never touch a development server's database or broker."""

import os

from shared import conf
from shared.audit.signing import derived_key_entry

from .local import *  # noqa: F401,F403
from .local import BASE_DIR, JWT

VAR_DIR = BASE_DIR / "var" / "test-sqlite" / "case" / (os.environ.get("PYTEST_XDIST_WORKER") or "main")
VAR_DIR.mkdir(parents=True, exist_ok=True)

# Whatever the environment says (CASE_DATABASE_URL, CASE_REDIS_URL), this suite is about SQLite and
# the embedded broker, cache and channel layer.
REDIS_URL = ""
DATABASES = {
    "default": conf.database(
        {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(VAR_DIR / "case.sqlite3"),
            # A file, not Django's default in-memory test database: concurrency tests need the
            # file's locking (WAL, busy timeout), as the development server has it.
            "TEST": {"NAME": str(VAR_DIR / "test-case.sqlite3")},
        },
        conn_max_age=0,
    )
}
CELERY_BROKER_URL = "filesystem://"
CELERY_BROKER_TRANSPORT = None  # base.py picks the Redis transport when CASE_REDIS_URL is set
CELERY_BROKER_TRANSPORT_OPTIONS = conf.broker_transport_options(CELERY_BROKER_URL, VAR_DIR / "broker")
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": str(VAR_DIR / "cache"),
    }
}
CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

SECRET_KEY = "test-secret-key-not-for-production"  # noqa: S105 - tests only
JWT["SIGNING_KEY"] = SECRET_KEY
FIELD_ENCRYPTION_KEYS = ["dGVzdC1vbmx5LWZlcm5ldC1rZXktMzItYnl0ZXMtISE="]
AUDIT_SIGNING_KEYS = [derived_key_entry(SECRET_KEY, key_id="test")]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # speed; hashing is Django's
MEDIA_ROOT = VAR_DIR / "media"
STATIC_ROOT = VAR_DIR / "static"
DEBUG = False
