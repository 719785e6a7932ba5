"""OpenAPI shapes of the schedule responses (documentation only: the views build plain dicts;
the bodies are documented from the views' InputSerializers)."""

from rest_framework import serializers

from orchestrator.schedules.models import CATCHUP_POLICIES


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
