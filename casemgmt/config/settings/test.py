"""Tests: real PostgreSQL and Redis (defaults 127.0.0.1), isolated per xdist worker."""

import os

os.environ.setdefault("CASE_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/casemgmt")
os.environ.setdefault("CASE_REDIS_URL", "redis://127.0.0.1:6379")

from shared.audit.signing import derived_key_entry  # noqa: E402

from .base import *  # noqa: E402,F401,F403
from .base import env  # noqa: E402

SECRET_KEY = env.str("CASE_SECRET_KEY", default="test-secret-key-not-for-production")
JWT["SIGNING_KEY"] = SECRET_KEY  # noqa: F405
FIELD_ENCRYPTION_KEYS = ["dGVzdC1vbmx5LWZlcm5ldC1rZXktMzItYnl0ZXMtISE="]
AUDIT_SIGNING_KEYS = [derived_key_entry(SECRET_KEY, key_id="test")]
# Overridable so a worker subprocess can send to a real local SMTP server in tests.
EMAIL_BACKEND = env.str("CASE_EMAIL_BACKEND", default="django.core.mail.backends.locmem.EmailBackend")
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # speed; hashing is Django's
MEDIA_ROOT = VAR_DIR / "test-media" / (os.environ.get("PYTEST_XDIST_WORKER") or "main")  # noqa: F405
DEBUG = False
if VAULT_STORAGE == "filesystem":  # noqa: F405 - each xdist worker keeps its own blobs
    STORAGES["vault"]["OPTIONS"]["location"] = str(  # noqa: F405
        VAR_DIR / "test-vault" / (os.environ.get("PYTEST_XDIST_WORKER") or "main")  # noqa: F405
    )
# The console's browser tests drive daphne (HTTP and the WebSocket on one port), which then serves
# the static files itself, as in the embedded default.
SERVE_STATIC = True
