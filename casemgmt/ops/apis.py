"""Liveness, readiness and health (public: probes and monitors send no credentials)."""

from __future__ import annotations

import time

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from shared.health import probe_broker, probe_database

STARTED_AT = time.monotonic()


def health(request: HttpRequest) -> JsonResponse:
    db = probe_database()
    return JsonResponse(
        {
            "status": "ok" if db.ok else "degraded",
            "database": "ok" if db.ok else "unavailable",
            "uptime": round(time.monotonic() - STARTED_AT, 3),
            "version": settings.SERVICE_VERSION,
        },
        status=200,
    )


def healthz(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok\n", content_type="text/plain")


def readyz(request: HttpRequest) -> HttpResponse:
    db, broker = probe_database(), probe_broker()
    if db.ok and broker.ok:
        return HttpResponse("ready\n", content_type="text/plain")
    problems = [name for name, probe in (("database", db), ("broker", broker)) if not probe.ok]
    return HttpResponse(
        f"not ready: {', '.join(problems)} unreachable\n", content_type="text/plain", status=503
    )
