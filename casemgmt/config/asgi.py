"""ASGI entry: HTTP through Django, WebSocket `/ws` through Channels with JWT auth."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casemgmt.config.settings.local")
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import path  # noqa: E402

from casemgmt.realtime.auth import JWTAuthMiddleware  # noqa: E402
from casemgmt.realtime.consumers import TenantEventsConsumer  # noqa: E402
from shared.conf import with_static_files  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": with_static_files(django_asgi_app),
        "websocket": JWTAuthMiddleware(URLRouter([path("ws", TenantEventsConsumer.as_asgi())])),
    }
)
