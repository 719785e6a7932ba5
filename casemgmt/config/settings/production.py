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
