"""Tests: real PostgreSQL and Redis (defaults 127.0.0.1), isolated per xdist worker."""

import os

os.environ.setdefault("ORCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/orchestrator")
os.environ.setdefault("ORCH_REDIS_URL", "redis://127.0.0.1:6379")

from shared.audit.signing import derived_key_entry  # noqa: E402

from .base import *  # noqa: E402,F401,F403
from .base import JWT, env  # noqa: E402

SECRET_KEY = env.str("ORCH_SECRET_KEY", default="test-secret-key-not-for-production")
JWT["SIGNING_KEY"] = env.str("ORCH_JWT_SIGNING_KEY", default="") or SECRET_KEY
FIELD_ENCRYPTION_KEYS = ["dGVzdC1vbmx5LWZlcm5ldC1rZXktMzItYnl0ZXMtISE="]
AUDIT_SIGNING_KEYS = [derived_key_entry(SECRET_KEY, key_id="test")]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
DEBUG = False
# Webhook tests deliver to receivers on 127.0.0.1 and check retries quickly; SSRF tests turn the
# private-target allowance off per test.
WEBHOOK_ALLOW_PRIVATE_TARGETS = env.bool("ORCH_WEBHOOK_ALLOW_PRIVATE_TARGETS", default=True)
WEBHOOK_RETRY_BASE_SECONDS = env.float("ORCH_WEBHOOK_RETRY_BASE_SECONDS", default=0.05)
WEBHOOK_TIMEOUT_SECONDS = env.float("ORCH_WEBHOOK_TIMEOUT_SECONDS", default=5.0)
# Browser tests drive the console under daphne (the log follower needs ASGI streaming): that server
# serves the static files itself, as the embedded run does.
SERVE_STATIC = True  # the console browser tests run on daphne, which serves its static files
