"""Time schedules: viewers read, operators pause and resume, admins create, replace and delete."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from orchestrator.definitions.validation import ID_RE
from orchestrator.runs.apis import MAX_PRIORITY
from orchestrator.schedules import openapi, selectors, services
from orchestrator.schedules.models import CATCHUP_LATEST, CATCHUP_POLICIES, Schedule
from orchestrator.schedules.timing import BadTiming, check_cron, zone
from orchestrator.security.principals import actor_name
from shared.api.fields import StrictCharField
from shared.api.openapi import BOOLEAN, TEXT, errors_also, query
from shared.api.pagination import list_body
from shared.api.querying import (
    QueryBooleanField,
    QuerySerializer,
    QueryTextField,
    list_parameters,
    page_of,
    paged,
)
from shared.api.time import iso

OPERATOR_POST = {"POST": "operator"}  # operators may pause and resume
MAX_INTERVAL = 366 * 24 * 3600
MAX_CATCHUP = 1000


def schedule_out(schedule: Schedule) -> dict[str, Any]:
    return {
        "id": schedule.id,
        "dag_id": schedule.dag_id,
        "task_id": schedule.task_id,
        "cron": schedule.cron,
        "interval_seconds": schedule.interval_seconds,
        "timezone": schedule.timezone,
        "parameters": schedule.parameters,
        "context": schedule.context,
        "start_date": iso(schedule.start_date),
        "end_date": iso(schedule.end_date),
        "catchup": schedule.catchup,
        "max_catchup": schedule.max_catchup,
        "paused": schedule.paused,
        "priority": schedule.priority,
        "next_fire_times": [iso(t) for t in selectors.next_fire_times(schedule)],
        "last_fire_time": iso(schedule.last_fire_time),
        "last_run_id": schedule.last_run_id,
        "last_error": schedule.last_error or None,
        "created_at": iso(schedule.created_at),
        "updated_at": iso(schedule.updated_at),
    }


class ScheduleSpecSerializer(serializers.Serializer):
    """The body of a create or a full replace."""

    # Exactly one target and exactly one timing (`validate` enforces it; the schema says it).
    openapi_extra = {
        "allOf": [
            {"oneOf": [{"required": ["dag_id"]}, {"required": ["task_id"]}]},
            {"oneOf": [{"required": ["cron"]}, {"required": ["interval_seconds"]}]},
        ]
    }
    dag_id = StrictCharField(
        required=False, allow_null=True, max_length=100, help_text="Exactly one of dag_id and task_id."
    )
    task_id = StrictCharField(required=False, allow_null=True, max_length=100)
    cron = StrictCharField(
        required=False,
        allow_null=True,
        max_length=200,
        help_text="5 fields; exactly one of cron and interval_seconds.",
    )
    interval_seconds = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=MAX_INTERVAL
    )
    timezone = StrictCharField(required=False, default="UTC", max_length=64, help_text="IANA name, for cron.")
    parameters = serializers.DictField(required=False, default=dict)
    context = StrictCharField(required=False, allow_null=True, max_length=100)  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class
    start_date = serializers.DateTimeField(required=False, allow_null=True)
    end_date = serializers.DateTimeField(required=False, allow_null=True)
    catchup = serializers.ChoiceField(choices=CATCHUP_POLICIES, required=False, default=CATCHUP_LATEST)
    max_catchup = serializers.IntegerField(required=False, default=10, min_value=1, max_value=MAX_CATCHUP)
    paused = serializers.BooleanField(required=False, default=False)
    priority = serializers.IntegerField(
        required=False, default=0, min_value=-MAX_PRIORITY, max_value=MAX_PRIORITY
    )

    def validate_timezone(self, value: str) -> str:
        try:
            zone(value)
        except BadTiming as exc:
            raise serializers.ValidationError(str(exc)) from None
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if (attrs.get("dag_id") is None) == (attrs.get("task_id") is None):
            raise serializers.ValidationError({"dag_id": "give exactly one of dag_id and task_id"})
        if (attrs.get("cron") is None) == (attrs.get("interval_seconds") is None):
            raise serializers.ValidationError({"cron": "give exactly one of cron and interval_seconds"})
        if attrs.get("cron") is not None:
            try:
                check_cron(attrs["cron"], zone(attrs.get("timezone", "UTC")))
            except BadTiming as exc:
                raise serializers.ValidationError({"cron": str(exc)}) from None
        start, end = attrs.get("start_date"), attrs.get("end_date")
        if start and end and end <= start:
            raise serializers.ValidationError({"end_date": "must be after start_date"})
        return attrs

    def spec(self) -> services.ScheduleSpec:
        data = {k: v for k, v in self.validated_data.items() if k != "id"}
        return services.ScheduleSpec(**data)


class ScheduleListCreateApi(APIView):
    @extend_schema_serializer(component_name="ScheduleIn")
    class InputSerializer(ScheduleSpecSerializer):
        id = StrictCharField(required=False, max_length=100, help_text="Generated when absent.")

        def validate_id(self, value: str) -> str:
            if not ID_RE.match(value):
                raise serializers.ValidationError(
                    "must be 1-100 characters of letters, digits, '_', '.', '-' (starting with a letter or digit)"
                )
            return value

    class FilterSerializer(QuerySerializer):
        dag_id = QueryTextField()
        task_id = QueryTextField()
        paused = QueryBooleanField()

    @extend_schema(
        operation_id="schedules_list",
        responses=openapi.ScheduleList,
        parameters=[
            *list_parameters(),
            query("dag_id", TEXT),
            query("task_id", TEXT),
            query("paused", BOOLEAN),
        ],
    )
    def get(self, request: Request) -> Response:
        page = page_of(request.query_params)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        items, total = paged(selectors.schedule_list(**filters.validated_data), page)
        return Response(list_body("schedules", [schedule_out(s) for s in items], total, page))

    @extend_schema(responses={201: openapi.ScheduleOut}, extensions=errors_also(404))
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        schedule = services.schedule_create(
            actor=actor_name(request.user),
            schedule_id=serializer.validated_data.get("id"),
            spec=serializer.spec(),
        )
        return Response(schedule_out(schedule), status=201)


class ScheduleDetailApi(APIView):
    @extend_schema_serializer(component_name="ScheduleReplaceIn")
    class InputSerializer(ScheduleSpecSerializer):
        pass

    @extend_schema(responses=openapi.ScheduleOut)
    def get(self, request: Request, schedule_id: str) -> Response:
        return Response(schedule_out(selectors.schedule_get(schedule_id=schedule_id)))

    @extend_schema(responses=openapi.ScheduleOut)
    def put(self, request: Request, schedule_id: str) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        schedule = services.schedule_update(
            actor=actor_name(request.user), schedule_id=schedule_id, spec=serializer.spec()
        )
        return Response(schedule_out(schedule))

    @extend_schema(responses={200: openapi.ScheduleDeleted})
    def delete(self, request: Request, schedule_id: str) -> Response:
        services.schedule_delete(actor=actor_name(request.user), schedule_id=schedule_id)
        return Response({"success": True, "message": f"Schedule {schedule_id} deleted."})


class SchedulePauseApi(APIView):
    min_role = OPERATOR_POST

    @extend_schema(request=None, responses=openapi.ScheduleOut)
    def post(self, request: Request, schedule_id: str) -> Response:
        schedule = services.schedule_set_paused(
            actor=actor_name(request.user), schedule_id=schedule_id, paused=True
        )
        return Response(schedule_out(schedule))


class ScheduleResumeApi(APIView):
    min_role = OPERATOR_POST

    @extend_schema(request=None, responses=openapi.ScheduleOut)
    def post(self, request: Request, schedule_id: str) -> Response:
        schedule = services.schedule_set_paused(
            actor=actor_name(request.user), schedule_id=schedule_id, paused=False
        )
        return Response(schedule_out(schedule))
