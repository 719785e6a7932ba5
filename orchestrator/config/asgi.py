"""ASGI entry for the orchestrator's HTTP API."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "orchestrator.config.settings.local")

from shared.conf import with_static_files  # noqa: E402

application = with_static_files(get_asgi_application())
