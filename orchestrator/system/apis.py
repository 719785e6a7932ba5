from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from django_prometheus.exports import ExportToDjangoView
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from orchestrator.runs.models import Run, TaskRun
from orchestrator.schedules.selectors import scheduler_status
from orchestrator.security.principals import actor_name
from orchestrator.system import definitions, openapi, selectors
from orchestrator.system.models import SweepState
from shared.api.fields import StrictBooleanField, StrictCharField
from shared.api.time import iso, now_ms
from shared.definitions.files import parse_documents
from shared.health import Probe, probe_broker, probe_database

STARTED_AT = time.monotonic()


def _backend_status(ok: bool) -> str:
    return "healthy" if ok else "unhealthy"


# Nothing runs without the broker: wake-ups and webhook deliveries cannot be sent (the API still
# records them, and the sweep sends them once it is back), so it counts like the database. The ping
# waits at most this long, so a broker that stops answering cannot hang a health check.
BROKER_PROBE_TIMEOUT_SECONDS = 1.0
BROKER_DOWN = "the broker (Redis) is unreachable"


def _broker() -> Probe:
    return probe_broker(timeout=BROKER_PROBE_TIMEOUT_SECONDS)


def _orchestrator_status(broker: Probe) -> str:
    return "healthy" if broker.ok else "unhealthy"


def _overall(backend_ok: bool, agents: str, recovery: str = "healthy", scheduler: str = "healthy") -> str:
    # an idle scheduler (nothing due) is fine; one that stopped ticking while schedules are due is not
    if not backend_ok:
        return "unhealthy"
    healthy = agents == "healthy" and recovery == "healthy" and scheduler != "degraded"
    return "healthy" if healthy else "degraded"


def scheduler_out(state: dict[str, Any]) -> dict[str, Any]:
    return {**state, "last_tick_at": iso(state["last_tick_at"])}


def recovery_out(state: SweepState | None) -> dict[str, Any]:
    """`degraded` when no recovery sweep finished within SWEEP_OVERDUE_SECONDS: lost task runs,
    stalled runs, lost wake-ups and webhook deliveries are then not being recovered."""
    last = state.last_run_at if state else None
    overdue = settings.SWEEP_OVERDUE_SECONDS
    if last is None:
        status, reason = "degraded", "the recovery sweep has never run (no agent has run it yet)"
    elif now_ms() - last > timedelta(seconds=overdue):
        status = "degraded"
        reason = f"the recovery sweep has not run for over {overdue:g} s (no live agent is running it)"
    else:
        status, reason = "healthy", ""
    return {
        "status": status,
        "reason": reason,
        "last_sweep_at": iso(last),
        "last_sweep_by": state.last_run_by if state else "",
        "period_seconds": overdue,
    }


def metrics_out() -> dict[str, Any]:
    return {
        "tasks": selectors.status_counts(TaskRun, selectors.TASK_STATES),
        "runs": selectors.status_counts(Run, selectors.RUN_STATES),
        "performance": {
            "average_task_duration_seconds": selectors.average_duration_seconds(TaskRun),
            "average_dag_duration_seconds": selectors.average_duration_seconds(Run),
            "tasks_per_minute": selectors.tasks_per_minute(),
            "window_seconds": settings.METRICS_WINDOW_SECONDS,
        },
        "resources": selectors.resources(),
    }


class HealthApi(APIView):
    """Exempt from security (the one open route). 503 when the database or the broker is unreachable
    (the broker shows as the `orchestrator` component: this service cannot hand out work); no agents
    is `degraded` (the API still works; queued tasks wait)."""

    public = True
    authentication_classes: list = []

    @extend_schema(responses={200: openapi.HEALTH, 503: openapi.HEALTH}, auth=[])
    def get(self, request: Request) -> Response:
        db, broker = probe_database(), _broker()
        agents = selectors.agents_status(selectors.agent_counts()) if db.ok else "unknown"
        return Response(
            {
                "status": _overall(db.ok and broker.ok, agents),
                "components": {
                    "backend": _backend_status(db.ok),
                    "orchestrator": _orchestrator_status(broker),
                    "agents": agents,
                },
            },
            status=200 if db.ok and broker.ok else 503,
        )


class StatusApi(APIView):
    @extend_schema(responses=openapi.STATUS)
    def get(self, request: Request) -> Response:
        db, broker = probe_database(), _broker()
        if db.ok:
            counts, queues = selectors.agent_counts(), selectors.queue_lengths()
            agents, recovery = selectors.agents_status(counts), recovery_out(selectors.last_sweep())
            scheduler = scheduler_out(scheduler_status())
        else:  # nothing more can be read; answer with what is known
            counts, queues, agents = {"count": 0, "active": 0, "inactive": 0}, [], "unknown"
            recovery = {**recovery_out(None), "status": "unknown", "reason": "the database is unreachable"}
            scheduler = {"status": "unknown"}
        return Response(
            {
                "status": _overall(db.ok and broker.ok, agents, recovery["status"], scheduler["status"]),
                "version": settings.SERVICE_VERSION,
                "uptime_seconds": int(time.monotonic() - STARTED_AT),
                "backend": {
                    "type": selectors.backend_type(),
                    "status": _backend_status(db.ok),
                    "latency_ms": round(db.latency_ms, 3),
                },
                "components": {
                    # one orchestrator process answers this request; the count is of instances seen
                    "orchestrator": orchestrator_out(broker),
                    "agents": {"status": agents, **counts},
                    "recovery": recovery,
                    "ui": {"status": selectors.ui_status()},
                    # a scheduler that stopped ticking while schedules are due degrades the service
                    "scheduler": scheduler,
                },
                "queues": {"total_pending_tasks": sum(q["length"] for q in queues), "queues": queues},
            }
        )


def orchestrator_out(broker: Probe) -> dict[str, Any]:
    out: dict[str, Any] = {"status": _orchestrator_status(broker), "count": 1}
    return out if broker.ok else {**out, "reason": BROKER_DOWN}


class MetricsApi(APIView):
    @extend_schema(responses=openapi.METRICS)
    def get(self, request: Request) -> Response:
        return Response(metrics_out())


class PrometheusMetricsApi(APIView):
    """Prometheus text at /metrics, behind the same credentials as the API when security is on
    (only /api/health is exempt); scrapers send a viewer `X-API-Key`."""

    @extend_schema(responses={(200, "text/plain"): OpenApiTypes.STR})
    def get(self, request: Request) -> HttpResponse:
        return ExportToDjangoView(request._request)


class DefinitionsPlanApi(APIView):
    """The dry run of a definitions sync over HTTP (`caseflow orch definitions diff DIR`): the files
    are validated and applied exactly as `manage_orch.py definitions sync` would, then rolled back.
    Admins only, like the writes it previews."""

    @extend_schema_serializer(component_name="DefinitionsPlanIn")
    class InputSerializer(serializers.Serializer):
        class FileSerializer(serializers.Serializer):
            name = StrictCharField(max_length=500, help_text="How errors and the plan name the file.")
            content = StrictCharField(allow_blank=True, trim_whitespace=False, help_text="The YAML text.")

        files = serializers.ListField(child=FileSerializer(), max_length=1000)
        prune = StrictBooleanField(
            required=False, default=False, help_text="Also list the deletes of what no file defines."
        )

    @extend_schema(operation_id="definitions_plan", responses=openapi.PlanOut)
    def post(self, request: Request) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        documents = [
            d for f in body.validated_data["files"] for d in parse_documents(f["name"], f["content"])
        ]
        plan = definitions.sync_plan(documents, prune=body.validated_data["prune"])
        return Response(definitions.sync_apply(plan, actor=actor_name(request.user), dry_run=True))
