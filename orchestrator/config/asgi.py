"""ASGI entry for the orchestrator's HTTP API."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "orchestrator.config.settings.local")

django_asgi_app = get_asgi_application()

from django.conf import settings  # noqa: E402

from shared.conf import with_static_files  # noqa: E402
from shared.web.deadline import body_deadline  # noqa: E402

application = body_deadline(
    with_static_files(django_asgi_app),
    seconds=settings.REQUEST_BODY_TIMEOUT_SECONDS,
    min_rate=settings.REQUEST_BODY_MIN_RATE,
)
