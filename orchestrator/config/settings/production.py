"""PostgreSQL + Redis, security on by default. Secrets have no defaults."""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F401,F403
from .base import DATABASES, FIELD_ENCRYPTION_KEYS, REDIS_URL, SECRET_KEY, env

if not SECRET_KEY:
    raise ImproperlyConfigured("ORCH_SECRET_KEY must be set in production.")
if not REDIS_URL:
    raise ImproperlyConfigured("ORCH_REDIS_URL must be set in production.")
if "sqlite" in DATABASES["default"]["ENGINE"]:
    raise ImproperlyConfigured("ORCH_DATABASE_URL must point at PostgreSQL in production.")
if not FIELD_ENCRYPTION_KEYS:
    raise ImproperlyConfigured("ORCH_FIELD_ENCRYPTION_KEYS must be set in production.")

ORCH_SECURITY_ENABLED = env.bool("ORCH_SECURITY_ENABLED", default=True)
SESSION_COOKIE_SECURE = env.bool("ORCH_SECURE_COOKIES", default=True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
DATABASES["default"]["CONN_MAX_AGE"] = env.int("ORCH_DB_CONN_MAX_AGE", default=60)
