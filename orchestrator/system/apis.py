from __future__ import annotations

import time

from django.conf import settings
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from shared.health import probe_database

STARTED_AT = time.monotonic()


class HealthApi(APIView):
    """Exempt from security (CONTRACT)."""

    public = True
    authentication_classes: list = []

    def get(self, request: Request) -> Response:
        db = probe_database()
        status = "healthy" if db.ok else "unhealthy"
        return Response(
            {
                "status": status,
                "components": {
                    "backend": "healthy" if db.ok else "unhealthy",
                    "orchestrator": "healthy",
                    "agents": "unknown",
                },
            },
            status=200 if db.ok else 503,
        )


class StatusApi(APIView):
    def get(self, request: Request) -> Response:
        db = probe_database()
        return Response(
            {
                "status": "healthy" if db.ok else "degraded",
                "version": settings.SERVICE_VERSION,
                "uptime_seconds": int(time.monotonic() - STARTED_AT),
                "backend": {
                    "type": settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1],
                    "status": "healthy" if db.ok else "unhealthy",
                    "latency_ms": round(db.latency_ms, 3),
                },
            }
        )
