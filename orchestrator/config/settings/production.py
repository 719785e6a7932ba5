"""PostgreSQL + Redis, security on by default. Secrets have no defaults."""

from shared import conf

from .base import *  # noqa: F401,F403
from .base import DATABASES, env

# Webhook secrets and headers are encrypted at rest with these keys; audit checkpoints are signed
# with keys the database never holds.
conf.require_production(globals(), "ORCH", required=("FIELD_ENCRYPTION_KEYS", "AUDIT_SIGNING_KEYS"))

ORCH_SECURITY_ENABLED = env.bool("ORCH_SECURITY_ENABLED", default=True)
SESSION_COOKIE_SECURE = env.bool("ORCH_SECURE_COOKIES", default=True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
DATABASES["default"]["CONN_MAX_AGE"] = env.int("ORCH_DB_CONN_MAX_AGE", default=60)
# Pooled connections for the ASGI web process (see shared.conf.use_connection_pool): deploy/ sets
# ORCH_DB_POOL_MAX_SIZE for orch-web only. Agents (prefork Celery workers) keep one persistent
# connection per process instead, as tuned by the agents app, so the default is off.
DB_POOL_MAX_SIZE = env.int("ORCH_DB_POOL_MAX_SIZE", default=0)
conf.use_connection_pool(
    DATABASES["default"], max_size=DB_POOL_MAX_SIZE, timeout=env.float("ORCH_DB_POOL_TIMEOUT", default=10.0)
)
