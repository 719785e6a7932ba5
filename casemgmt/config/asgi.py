"""ASGI entry, the production server's application: HTTP through Django's WSGI handler on a pool of
threads (shared.web.asgi: WSGI cost per request), WebSocket `/ws` through Channels with JWT auth."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casemgmt.config.settings.local")
django_wsgi_app = get_wsgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402
from django.urls import path  # noqa: E402

from casemgmt.realtime.auth import JWTAuthMiddleware  # noqa: E402
from casemgmt.realtime.consumers import TenantEventsConsumer  # noqa: E402
from shared.conf import with_static_files  # noqa: E402
from shared.web.asgi import wsgi_http  # noqa: E402
from shared.web.deadline import body_deadline  # noqa: E402

http = wsgi_http(
    django_wsgi_app, threads=settings.WEB_THREADS, max_body_bytes=settings.MAX_REQUEST_BODY_BYTES
)
application = ProtocolTypeRouter(
    {
        "http": body_deadline(
            with_static_files(http),
            seconds=settings.REQUEST_BODY_TIMEOUT_SECONDS,
            min_rate=settings.REQUEST_BODY_MIN_RATE,
        ),
        "websocket": JWTAuthMiddleware(URLRouter([path("ws", TenantEventsConsumer.as_asgi())])),
    }
)
