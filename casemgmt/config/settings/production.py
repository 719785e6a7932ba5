"""PostgreSQL + Redis. Secrets have no defaults: a missing one stops the process at start."""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F401,F403
from .base import DATABASES, FIELD_ENCRYPTION_KEYS, REDIS_URL, SECRET_KEY, env

if not SECRET_KEY:
    raise ImproperlyConfigured("CASE_SECRET_KEY must be set in production.")
if not REDIS_URL:
    raise ImproperlyConfigured("CASE_REDIS_URL must be set in production.")
if "sqlite" in DATABASES["default"]["ENGINE"]:
    raise ImproperlyConfigured("CASE_DATABASE_URL must point at PostgreSQL in production.")
if not FIELD_ENCRYPTION_KEYS:
    raise ImproperlyConfigured("CASE_FIELD_ENCRYPTION_KEYS must be set in production.")

SESSION_COOKIE_SECURE = env.bool("CASE_SECURE_COOKIES", default=True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CASE_DB_CONN_MAX_AGE", default=60)

# Under ASGI each request's sync code runs in a fresh thread, so per-thread persistent connections are
# never reused (a new PostgreSQL connection per request). Django's psycopg pool fixes that; see
# docs/benchmarks.md. CASE_DB_POOL_MAX_SIZE=0 turns the pool off (then CASE_DB_CONN_MAX_AGE applies).
DB_POOL_MAX_SIZE = env.int("CASE_DB_POOL_MAX_SIZE", default=8)
if DB_POOL_MAX_SIZE > 0:
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": DB_POOL_MAX_SIZE,
        "timeout": env.float("CASE_DB_POOL_TIMEOUT", default=10.0),
    }
