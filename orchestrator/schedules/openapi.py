"""OpenAPI shapes of the schedule endpoints (documentation only: the views build plain dicts)."""

from rest_framework import serializers

from orchestrator.schedules.models import CATCHUP_POLICIES


class ScheduleIn(serializers.Serializer):
    # Exactly one target and exactly one timing.
    openapi_extra = {
        "allOf": [
            {"oneOf": [{"required": ["dag_id"]}, {"required": ["task_id"]}]},
            {"oneOf": [{"required": ["cron"]}, {"required": ["interval_seconds"]}]},
        ]
    }
    id = serializers.CharField(required=False, help_text="Create only; generated when absent.")
    dag_id = serializers.CharField(required=False, help_text="Exactly one of dag_id and task_id.")
    task_id = serializers.CharField(required=False)
    cron = serializers.CharField(
        required=False, help_text="5 fields; exactly one of cron and interval_seconds."
    )
    interval_seconds = serializers.IntegerField(required=False, min_value=1)
    timezone = serializers.CharField(required=False, default="UTC", help_text="IANA name, for cron.")
    parameters = serializers.DictField(required=False)
    context = serializers.CharField(required=False)  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class
    start_date = serializers.DateTimeField(required=False)
    end_date = serializers.DateTimeField(required=False)
    catchup = serializers.ChoiceField(choices=CATCHUP_POLICIES, required=False, default="latest")
    max_catchup = serializers.IntegerField(required=False, default=10)
    paused = serializers.BooleanField(required=False, default=False)
    priority = serializers.IntegerField(required=False, default=0)


class ScheduleOut(serializers.Serializer):
    id = serializers.CharField()
    dag_id = serializers.CharField(allow_null=True)
    task_id = serializers.CharField(allow_null=True)
    cron = serializers.CharField(allow_null=True)
    interval_seconds = serializers.IntegerField(allow_null=True)
    timezone = serializers.CharField()
    parameters = serializers.DictField()
    context = serializers.CharField(allow_null=True)  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class
    start_date = serializers.DateTimeField(allow_null=True)
    end_date = serializers.DateTimeField(allow_null=True)
    catchup = serializers.ChoiceField(choices=CATCHUP_POLICIES)
    max_catchup = serializers.IntegerField()
    paused = serializers.BooleanField()
    priority = serializers.IntegerField()
    next_fire_times = serializers.ListField(
        child=serializers.DateTimeField(), help_text="The next 5 fire times, UTC (also while paused)."
    )
    last_fire_time = serializers.DateTimeField(allow_null=True)
    last_run_id = serializers.CharField(allow_null=True)
    last_error = serializers.CharField(allow_null=True, help_text="Why the last fire time made no run.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class ScheduleList(serializers.Serializer):
    schedules = ScheduleOut(many=True)
    total = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()


class ScheduleDeleted(serializers.Serializer):
    success = serializers.BooleanField()
    message = serializers.CharField()
