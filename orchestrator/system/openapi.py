"""OpenAPI shapes of the system endpoints (documentation only; the views build plain dicts)."""

from typing import Any

from drf_spectacular.utils import inline_serializer
from rest_framework import serializers as s

from orchestrator.definitions.validation import ID_RE
from orchestrator.runs.openapi import RUN_ID_PATTERN

# Path parameters that name a definition or a run: any other text is a 400 or 404.
PATH_ID_PATTERNS = {
    "task_id": ID_RE.pattern,
    "dag_id": ID_RE.pattern,
    "context_id": ID_RE.pattern,
    "schedule_id": ID_RE.pattern,
    "name": ID_RE.pattern,  # a pool
    "run_id": RUN_ID_PATTERN,
}


def id_path_parameters(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular POSTPROCESSING_HOOKS entry: the id patterns of path parameters."""
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            for parameter in operation.get("parameters", []) if isinstance(operation, dict) else []:
                pattern = PATH_ID_PATTERNS.get(parameter.get("name"))
                if parameter.get("in") == "path" and pattern:
                    parameter["schema"] = {"type": "string", "pattern": pattern}
    return result


def _obj(name: str, fields: dict) -> s.Serializer:
    return inline_serializer(name, fields)


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
                "recovery": _obj(
                    "RecoveryComponent",
                    {
                        "status": s.CharField(),
                        "reason": s.CharField(),
                        "last_sweep_at": s.DateTimeField(allow_null=True),
                        "last_sweep_by": s.CharField(),
                        "period_seconds": s.FloatField(),
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


class PlanChangeOut(s.Serializer):
    kind = s.ChoiceField(choices=["pool", "context", "task", "dag", "schedule"])
    id = s.CharField()
    action = s.ChoiceField(choices=["create", "update", "delete", "unchanged"])
    file = s.CharField(allow_null=True, help_text="The file that defines it (null for a delete).")
    diff = s.DictField(
        child=inline_serializer("PlanFieldDiff", {"before": s.JSONField(), "after": s.JSONField()}),
        help_text="Field -> {before, after}: every field of a create, the changed fields of an update.",
    )


class PlanOut(s.Serializer):
    applied = s.BooleanField(help_text="Always false here: a plan changes nothing.")
    # inline: a Serializer subclass cannot declare fields named create and update (its methods)
    summary = inline_serializer(
        "PlanSummary", {a: s.IntegerField() for a in ("create", "update", "delete", "unchanged")}
    )
    changes = PlanChangeOut(many=True)
