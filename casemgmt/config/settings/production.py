"""PostgreSQL + Redis. Secrets have no defaults: a missing one stops the process at start."""

from shared import conf

from .base import *  # noqa: F401,F403
from .base import DATABASES, env

# Connector credentials and inbound webhook secrets are encrypted with these keys; audit
# checkpoints are signed with keys the database never holds.
conf.require_production(globals(), "CASE", required=("FIELD_ENCRYPTION_KEYS", "AUDIT_SIGNING_KEYS"))

SESSION_COOKIE_SECURE = env.bool("CASE_SECURE_COOKIES", default=True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CASE_DB_CONN_MAX_AGE", default=60)

# Pooled connections for ASGI (see shared.conf.use_connection_pool and docs/benchmarks.md).
DB_POOL_MAX_SIZE = env.int("CASE_DB_POOL_MAX_SIZE", default=8)
conf.use_connection_pool(
    DATABASES["default"], max_size=DB_POOL_MAX_SIZE, timeout=env.float("CASE_DB_POOL_TIMEOUT", default=10.0)
)
