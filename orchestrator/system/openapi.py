"""OpenAPI shapes of the system endpoints (documentation only; the views build plain dicts)."""

from drf_spectacular.utils import inline_serializer
from rest_framework import serializers as s


def _obj(name: str, fields: dict) -> s.Serializer:
    return inline_serializer(name, fields)  # type: ignore[return-value]


def _counts(name: str, extra: tuple[str, ...]) -> s.Serializer:
    keys = ("pending", "running", "completed", "failed", *extra, "total")
    return _obj(name, {k: s.IntegerField() for k in keys})


HEALTH = _obj(
    "Health",
    {
        "status": s.CharField(),
        "components": _obj(
            "HealthComponents",
            {"backend": s.CharField(), "orchestrator": s.CharField(), "agents": s.CharField()},
        ),
    },
)

STATUS = _obj(
    "Status",
    {
        "status": s.CharField(),
        "version": s.CharField(),
        "uptime_seconds": s.IntegerField(),
        "backend": _obj(
            "Backend", {"type": s.CharField(), "status": s.CharField(), "latency_ms": s.FloatField()}
        ),
        "components": _obj(
            "StatusComponents",
            {
                "orchestrator": _obj(
                    "OrchestratorComponent", {"status": s.CharField(), "count": s.IntegerField()}
                ),
                "agents": _obj(
                    "AgentsComponent",
                    {
                        "status": s.CharField(),
                        "count": s.IntegerField(),
                        "active": s.IntegerField(),
                        "inactive": s.IntegerField(),
                    },
                ),
                "ui": _obj("UiComponent", {"status": s.CharField()}),
                "scheduler": _obj(
                    "SchedulerComponent",
                    {
                        "status": s.CharField(help_text="healthy, degraded, idle or unknown"),
                        "last_tick_at": s.DateTimeField(allow_null=True),
                        "tick_seconds": s.FloatField(),
                        "count": s.IntegerField(help_text="Scheduler processes that ticked lately."),
                        "schedules": _obj(
                            "ScheduleCounts",
                            {
                                "total": s.IntegerField(),
                                "active": s.IntegerField(),
                                "paused": s.IntegerField(),
                            },
                        ),
                    },
                ),
            },
        ),
        "queues": _obj(
            "StatusQueues",
            {
                "total_pending_tasks": s.IntegerField(),
                "queues": inline_serializer(
                    "QueueLength", {"name": s.CharField(), "length": s.IntegerField()}, many=True
                ),
            },
        ),
    },
)

METRICS = _obj(
    "Metrics",
    {
        "tasks": _counts("TaskCounts", ("queued", "cancelled")),
        "runs": _counts("RunCounts", ("cancelled", "paused")),
        "performance": _obj(
            "Performance",
            {
                "average_task_duration_seconds": s.FloatField(),
                "average_dag_duration_seconds": s.FloatField(),
                "tasks_per_minute": s.FloatField(),
                "window_seconds": s.IntegerField(),
            },
        ),
        "resources": _obj(
            "Resources",
            {
                "cpu_usage_percent": s.FloatField(),
                "memory_usage_mb": s.FloatField(),
                "disk_usage_percent": s.FloatField(),
            },
        ),
    },
)
