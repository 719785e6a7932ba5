"""OpenAPI shapes of the scheduling, runs, logs and queue endpoints' responses (documentation only:
bodies are read and documented by each view's InputSerializer)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema_field
from rest_framework import serializers

# Caller-supplied run ids and the bounds of the scheduling options (checked in
# orchestrator/runs/inputs.py).
MAX_TIMEOUT = 7 * 24 * 3600
MAX_RETRIES = 20
MAX_RETRY_DELAY = 24 * 3600
MAX_PRIORITY = 1_000_000
RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"

IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    {"type": "string", "pattern": "^[\\x21-\\x7e]{1,255}$"},
    OpenApiParameter.HEADER,
    required=False,
    description=(
        "1-255 printable ASCII characters. A retry with the same key (same caller, within 24 h) answers "
        "the first successful response instead of creating another run; the same key with another "
        "request is 422 idempotency_key_reused."
    ),
)


@extend_schema_field({"type": "string", "pattern": RUN_ID_PATTERN})
class RunIdField(serializers.CharField):
    pass


class ScheduleTaskOut(serializers.Serializer):
    success = serializers.BooleanField()
    run_id = serializers.CharField()
    dag_run_id = serializers.CharField()
    task_run_id = serializers.CharField()
    status = serializers.CharField()
    start_time = serializers.DateTimeField()


class ScheduledTask(serializers.Serializer):
    id = serializers.CharField()
    task_run_id = serializers.CharField()
    status = serializers.CharField()


class ScheduleDagOut(serializers.Serializer):
    success = serializers.BooleanField()
    run_id = serializers.CharField()
    status = serializers.CharField()
    start_time = serializers.DateTimeField()
    tasks = ScheduledTask(many=True)


class CancelOut(serializers.Serializer):
    success = serializers.BooleanField()
    message = serializers.CharField()
    run_id = serializers.CharField()


class RunStateOut(serializers.Serializer):
    success = serializers.BooleanField()
    run_id = serializers.CharField()
    status = serializers.CharField(help_text="paused after a pause; pending or running after a resume.")


class RerunOut(serializers.Serializer):
    success = serializers.BooleanField()
    new_run_id = serializers.CharField()
    original_run_id = serializers.CharField()
    status = serializers.CharField()
    start_time = serializers.DateTimeField()


class TaskRunOut(serializers.Serializer):
    task_id = serializers.CharField()
    task_run_id = serializers.CharField()
    status = serializers.CharField()
    start_time = serializers.DateTimeField(allow_null=True)
    end_time = serializers.DateTimeField(allow_null=True)
    duration_seconds = serializers.IntegerField(allow_null=True)
    attempts = serializers.IntegerField()
    queue = serializers.CharField()
    exit_code = serializers.IntegerField(allow_null=True)
    logs = serializers.CharField(required=False, help_text="With include_logs=true.")


class RunOut(serializers.Serializer):
    run_id = serializers.CharField()
    dag_id = serializers.CharField(allow_null=True)
    status = serializers.CharField()
    start_time = serializers.DateTimeField()
    end_time = serializers.DateTimeField(allow_null=True)
    duration_seconds = serializers.IntegerField(allow_null=True)
    task_count = serializers.IntegerField()
    completed_tasks = serializers.IntegerField()
    failed_tasks = serializers.IntegerField()
    original_run_id = serializers.CharField(allow_null=True)
    priority = serializers.IntegerField()
    schedule_id = serializers.CharField(allow_null=True, help_text="The time schedule that made the run.")
    fire_time = serializers.DateTimeField(allow_null=True, help_text="The schedule's fire time it is for.")


class RunDetailOut(RunOut):
    context = serializers.DictField(child=serializers.CharField())  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class
    versions = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="{task_id: version}: the definition versions the run executes.",
    )
    dag_version = serializers.IntegerField(allow_null=True)
    tasks = TaskRunOut(many=True, required=False, help_text="With include_tasks=true.")


class RunList(serializers.Serializer):
    runs = RunOut(many=True)
    total = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()


class GraphNode(serializers.Serializer):
    id = serializers.CharField()
    task_id = serializers.CharField()
    status = serializers.CharField()


class GraphEdge(serializers.Serializer):
    # "from" is a Python keyword: declared through the fields mapping below
    to = serializers.CharField()

    def get_fields(self):
        fields = super().get_fields()
        fields["from"] = serializers.CharField()
        return fields


class GraphOut(serializers.Serializer):
    run_id = serializers.CharField()
    dag_id = serializers.CharField(allow_null=True)
    nodes = GraphNode(many=True)
    edges = GraphEdge(many=True)


class LogsOut(serializers.Serializer):
    task_run_id = serializers.CharField()
    logs = serializers.CharField()
    has_more = serializers.BooleanField()
    truncated = serializers.BooleanField()
    start_time = serializers.DateTimeField(allow_null=True)
    end_time = serializers.DateTimeField(allow_null=True)


class PurgeOut(serializers.Serializer):
    success = serializers.BooleanField()
    message = serializers.CharField()
    tasks_removed = serializers.IntegerField()


class PoolOut(serializers.Serializer):
    name = serializers.CharField()
    slots = serializers.IntegerField()
    used = serializers.IntegerField(help_text="Task runs of the pool running now.")
    queued = serializers.IntegerField(help_text="Task runs of the pool waiting to be claimed.")


class PoolList(serializers.Serializer):
    pools = PoolOut(many=True)
    total = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()


# One server-sent event as a client parses it: a log line (`message`, its line id as `id`), then
# `end` with `{"status": ...}` once the task run is finished, or `truncated` with
# `{"sent_bytes", "next_id"}` at the connection's byte cap. An event after a line keeps that line's
# id (the stream's last event id), so a reconnect resumes after it.
_LINE_ID = {"type": "string", "pattern": "^[0-9]+$"}
LOG_STREAM_EVENT = {
    "description": "One server-sent event (comment lines such as keep-alives are not events).",
    "oneOf": [
        {
            "type": "object",
            "required": ["event", "data", "id"],
            "properties": {"event": {"type": "string", "enum": ["message"]}, "data": {"type": "string"},
                           "id": _LINE_ID},
        },
        {
            "type": "object",
            "required": ["event", "data"],
            "properties": {
                "event": {"type": "string", "enum": ["end"]},
                "data": {"type": "string", "description": 'JSON: {"status": "completed" | "failed" | "cancelled"}'},
                "id": _LINE_ID,
            },
        },
        {
            "type": "object",
            "required": ["event", "data"],
            "properties": {
                "event": {"type": "string", "enum": ["truncated"]},
                "data": {"type": "string", "description": 'JSON: {"sent_bytes": <int>, "next_id": <int>}'},
                "id": _LINE_ID,
            },
        },
    ],
}  # fmt: skip
