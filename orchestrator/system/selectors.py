"""Status, health and metrics computed from real state: the database, agent heartbeats and psutil."""

from __future__ import annotations

import functools
import logging
import shutil
from datetime import timedelta
from typing import Any

import psutil
from django.conf import settings
from django.db.models import Avg, Count, DurationField, ExpressionWrapper, F, Q
from django.template.loader import get_template
from django.urls import resolve, reverse
from drf_spectacular.generators import SchemaGenerator

from orchestrator.agents.models import Agent
from orchestrator.agents.selectors import retire_cutoff
from orchestrator.definitions.models import TaskDefinition
from orchestrator.runs.models import COMPLETED, FAILED, QUEUED, Run, TaskRun
from orchestrator.system.models import SweepState
from shared.api.time import now_ms

logger = logging.getLogger(__name__)

TASK_STATES = ("pending", "queued", "running", "completed", "failed", "cancelled")
RUN_STATES = ("pending", "running", "paused", "completed", "failed", "cancelled")
FINISHED = (COMPLETED, FAILED)


def backend_type() -> str:
    engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    return "sqlite" if engine == "sqlite3" else engine


def agent_counts() -> dict[str, int]:
    """Active = heartbeat younger than AGENT_STALE_SECONDS and not marked offline; agents silent
    for AGENT_RETIRE_SECONDS are retired and not counted at all."""
    cutoff = now_ms() - timedelta(seconds=settings.AGENT_STALE_SECONDS)
    counts = Agent.objects.filter(last_heartbeat__gte=retire_cutoff()).aggregate(
        total=Count("pk"), active=Count("pk", filter=Q(status="active", last_heartbeat__gte=cutoff))
    )
    return {
        "count": counts["total"],
        "active": counts["active"],
        "inactive": counts["total"] - counts["active"],
    }


def agents_status(counts: dict[str, int]) -> str:
    if counts["active"] == 0:
        return "unhealthy"  # nothing would execute a queued task
    return "healthy" if counts["inactive"] == 0 else "degraded"


def last_sweep() -> SweepState | None:
    """The recovery sweep's record (None before any sweep finished)."""
    return SweepState.objects.filter(name="recovery").first()


def queue_lengths() -> list[dict[str, Any]]:
    """Every known queue (task definitions, live agents, queued task runs) with its queued count."""
    lengths = dict(
        TaskRun.objects.filter(status=QUEUED)
        .values_list("queue")
        .annotate(n=Count("pk"))
        .values_list("queue", "n")
    )
    cutoff = now_ms() - timedelta(seconds=settings.AGENT_STALE_SECONDS)
    agent_queues = Agent.objects.filter(status="active", last_heartbeat__gte=cutoff).values_list(
        "queues", flat=True
    )
    names = set(lengths) | {q for queues in agent_queues for q in queues}
    names |= set(TaskDefinition.objects.values_list("queue", flat=True).distinct())
    return [{"name": name, "length": lengths.get(name, 0)} for name in sorted(names)]


def status_counts(model: type[Run] | type[TaskRun], states: tuple[str, ...]) -> dict[str, int]:
    rows = dict(model.objects.values_list("status").annotate(n=Count("pk")).values_list("status", "n"))
    counts = {state: rows.get(state, 0) for state in states}
    counts["total"] = sum(rows.values())
    return counts


def to_seconds(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, timedelta):
        return round(value.total_seconds(), 3)
    return round(float(value) / 1_000_000, 3)  # SQLite averages durations as microseconds


def average_duration_seconds(model: type[Run] | type[TaskRun]) -> float:
    duration = ExpressionWrapper(F("end_time") - F("start_time"), output_field=DurationField())
    finished = model.objects.filter(status__in=FINISHED, start_time__isnull=False, end_time__isnull=False)
    return to_seconds(finished.aggregate(avg=Avg(duration))["avg"])


def tasks_per_minute() -> float:
    """Task runs finished (completed or failed) per minute over the last METRICS_WINDOW_SECONDS."""
    window = settings.METRICS_WINDOW_SECONDS
    since = now_ms() - timedelta(seconds=window)
    finished = TaskRun.objects.filter(status__in=FINISHED, end_time__gte=since).count()
    return round(finished / (window / 60), 3)


def resources() -> dict[str, float]:
    """Host-level figures of the machine serving this request."""
    disk = shutil.disk_usage(settings.VAR_DIR if settings.VAR_DIR.exists() else "/")
    return {
        "cpu_usage_percent": float(psutil.cpu_percent(interval=None)),
        "memory_usage_mb": round(psutil.virtual_memory().used / (1024 * 1024), 1),
        "disk_usage_percent": round(disk.used / disk.total * 100, 1),
    }


def ui_status() -> str:
    """The UI this process serves is the API documentation page over the OpenAPI document. It is
    `healthy` when both routes resolve to views, the page's template loads and the document builds;
    anything else is `unhealthy` (logged), so a broken deploy of the docs shows on /api/status."""
    try:
        for name in ("docs", "openapi"):
            resolve(reverse(name))
        get_template("drf_spectacular/redoc.html")
        _openapi_document_builds()
    except Exception:  # any failure to serve the docs is the answer here, not a 500
        logger.warning("the documentation UI cannot be served", exc_info=True)
        return "unhealthy"
    return "healthy"


@functools.cache
def _openapi_document_builds() -> bool:
    """Built once per process: the document depends only on the code, which does not change while
    the process runs. A failure is not cached, so it is tried again on the next status request."""
    SchemaGenerator().get_schema(request=None, public=True)
    return True
