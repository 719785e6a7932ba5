"""WSGI entry for benchmarking the case service's HTTP API under gunicorn (WebSocket needs ASGI)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casemgmt.config.settings.production")
application = get_wsgi_application()
