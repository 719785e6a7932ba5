"""Embedded default: SQLite, filesystem broker, file cache. No servers needed."""

from shared.audit.signing import derived_key_entry

from .base import *  # noqa: F401,F403
from .base import AUDIT_SIGNING_KEYS, FIELD_ENCRYPTION_KEYS, JWT, SECRET_KEY, VAR_DIR, env

VAR_DIR.mkdir(parents=True, exist_ok=True)
# DEBUG stays off even here: unknown routes must answer our JSON 404 error body, not Django's
# debug page. Static files (the admin's) are served by the ASGI app instead (SERVE_STATIC).
DEBUG = env.bool("ORCH_DEBUG", default=False)
SERVE_STATIC = True
if not SECRET_KEY:
    SECRET_KEY = "local-development-only-not-secret"  # noqa: S105 - embedded default, never production
    JWT["SIGNING_KEY"] = JWT["SIGNING_KEY"] or SECRET_KEY
if not FIELD_ENCRYPTION_KEYS:
    FIELD_ENCRYPTION_KEYS = ["bG9jYWwtZGV2ZWxvcG1lbnQtb25seS1rZXktMzJieXQ="]
if not AUDIT_SIGNING_KEYS:
    # Embedded default only: stable across restarts (derived from SECRET_KEY), so checkpoints made
    # yesterday still verify; production refuses to start without keys of its own.
    AUDIT_SIGNING_KEYS = [derived_key_entry(SECRET_KEY)]
