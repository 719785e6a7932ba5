"""Liveness, readiness, health and Prometheus metrics (public: probes, monitors and scrapers send no
credentials). Plain Django views, cheap and independent of the API's authentication; they are
documented in config/openapi_routes.py."""

from __future__ import annotations

import time

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django_prometheus.exports import ExportToDjangoView

from shared.api.views import allow_methods
from shared.health import probe_broker, probe_database

STARTED_AT = time.monotonic()


@allow_methods("GET", "HEAD")
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


@allow_methods("GET", "HEAD")
def healthz(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok\n", content_type="text/plain")


@allow_methods("GET", "HEAD")
def readyz(request: HttpRequest) -> HttpResponse:
    db, broker = probe_database(), probe_broker()
    if db.ok and broker.ok:
        return HttpResponse("ready\n", content_type="text/plain")
    problems = [name for name, probe in (("database", db), ("broker", broker)) if not probe.ok]
    return HttpResponse(
        f"not ready: {', '.join(problems)} unreachable\n", content_type="text/plain", status=503
    )


@allow_methods("GET", "HEAD")
def metrics(request: HttpRequest) -> HttpResponse:
    return ExportToDjangoView(request)
