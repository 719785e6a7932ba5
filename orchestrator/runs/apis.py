"""Scheduling, runs, logs, cancel, rerun, queue purge and pools."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from orchestrator.definitions import services as definitions
from orchestrator.definitions.inputs import BoundedIntegerField, ObjectBodySerializer, TextField
from orchestrator.runs import logstream, openapi, selectors, services
from orchestrator.runs.idempotency import idempotent
from orchestrator.runs.inputs import (
    FlagField,
    FromTaskField,
    LenientBooleanField,
    ScheduleOptionsSerializer,
    TargetIdField,
)
from orchestrator.runs.outputs import (
    pool_out,
    rerun_out,
    run_graph_json,
    run_graph_out,
    run_out,
    run_state_out,
    schedule_dag_out,
    schedule_task_out,
    task_logs_out,
    task_run_out,
)  # fmt: skip
from orchestrator.security.principals import actor_name
from shared.api import errors
from shared.api.openapi import BOOLEAN, TEXT, TIMESTAMP_OR_DATE, errors_also, one_of, query
from shared.api.pagination import list_body
from shared.api.querying import (
    QueryBooleanField,
    QueryChoiceField,
    QueryIntegerField,
    QuerySerializer,
    QuerySortField,
    QueryTextField,
    QueryTimestampField,
    list_parameters,
    page_of,
    paged,
)

OPERATOR_POST = {"POST": "operator"}  # operators may schedule, cancel and rerun
MAX_PRIORITY = openapi.MAX_PRIORITY
MAX_SLOTS = 100_000


class ScheduleTaskApi(APIView):
    min_role = OPERATOR_POST

    @extend_schema_serializer(component_name="ScheduleTaskIn")
    class InputSerializer(ScheduleOptionsSerializer):
        target_id = "task_id"
        parameters_help = "PARAM (scheduled task) or <task_id>.<PARAM>."
        task_id = TargetIdField()
        queue = TextField(unset=None, required=False)

    @extend_schema(
        parameters=[openapi.IDEMPOTENCY_KEY],
        responses={201: openapi.ScheduleTaskOut},
        extensions=errors_also(404),
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)

        def schedule() -> tuple[int, dict]:
            run, task_runs = services.run_schedule_task(
                actor=actor_name(request.user), **serializer.validated_data
            )
            return 201, schedule_task_out(run, task_runs)

        return idempotent(request, schedule)


class ScheduleDagApi(APIView):
    min_role = OPERATOR_POST

    @extend_schema_serializer(component_name="ScheduleDagIn")
    class InputSerializer(ScheduleOptionsSerializer):
        target_id = "dag_id"
        parameters_help = "<task_id>.<PARAM>."
        dag_id = TargetIdField()

    @extend_schema(
        parameters=[openapi.IDEMPOTENCY_KEY],
        responses={201: openapi.ScheduleDagOut},
        extensions=errors_also(404),
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)

        def schedule() -> tuple[int, dict]:
            run, task_runs = services.run_schedule_dag(
                actor=actor_name(request.user), **serializer.validated_data
            )
            return 201, schedule_dag_out(run, task_runs)

        return idempotent(request, schedule)


class RunCancelApi(APIView):
    min_role = OPERATOR_POST

    class FilterSerializer(QuerySerializer):
        force = QueryBooleanField(required=False, default=False)

    @extend_schema_serializer(component_name="CancelIn")
    class InputSerializer(serializers.Serializer):
        # The body is optional and lenient: anything but an object, or a force that is not a
        # boolean, is read as no force (as it always was).
        force = LenientBooleanField(
            required=False, help_text="Also mark task runs whose agent does not answer (or ?force=true)."
        )

    @extend_schema(
        responses=openapi.CancelOut,
        parameters=[query("force", BOOLEAN, "also mark task runs whose agent does not answer")],
    )
    def post(self, request: Request, run_id: str) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        body = self.InputSerializer(data=request.data if isinstance(request.data, dict) else {})
        body.is_valid(raise_exception=True)
        force = filters.validated_data["force"] or body.validated_data["force"]
        cancelled = services.run_cancel(actor=actor_name(request.user), run_id=run_id, force=force)
        return Response(
            {"success": True, "message": f"Run {run_id} cancelled ({cancelled} task runs).", "run_id": run_id}
        )


class RunPauseApi(APIView):
    min_role = OPERATOR_POST

    @extend_schema(request=None, responses=openapi.RunStateOut)
    def post(self, request: Request, run_id: str) -> Response:
        return Response(run_state_out(services.run_pause(actor=actor_name(request.user), run_id=run_id)))


class RunResumeApi(APIView):
    min_role = OPERATOR_POST

    @extend_schema(request=None, responses=openapi.RunStateOut)
    def post(self, request: Request, run_id: str) -> Response:
        return Response(run_state_out(services.run_resume(actor=actor_name(request.user), run_id=run_id)))


class RunRerunApi(APIView):
    min_role = OPERATOR_POST

    @extend_schema_serializer(component_name="RerunIn")
    class InputSerializer(ObjectBodySerializer):
        failed_only = FlagField(required=False)
        from_task = FromTaskField(required=False)
        reset_params = FlagField(required=False)
        latest = FlagField(
            required=False,
            help_text="Execute the latest definitions rather than the original's pinned versions.",
        )

    @extend_schema(parameters=[openapi.IDEMPOTENCY_KEY], responses={201: openapi.RerunOut})
    def post(self, request: Request, run_id: str) -> Response:
        serializer = self.InputSerializer(data=request.data or {})  # every field is optional
        serializer.is_valid(raise_exception=True)
        return idempotent(
            request,
            lambda: (
                201,
                rerun_out(
                    services.run_rerun(
                        actor=actor_name(request.user), run_id=run_id, **serializer.validated_data
                    )
                ),
            ),
        )


class RunListApi(APIView):
    class FilterSerializer(QuerySerializer):
        status = QueryChoiceField(
            choices=selectors.RUN_STATUSES,
            message=f"status must be one of {', '.join(selectors.RUN_STATUSES)}",
        )
        dag_id = QueryTextField()
        schedule_id = QueryTextField()
        since = QueryTimestampField()
        until = QueryTimestampField()
        sort = QuerySortField(allowed=selectors.RUN_SORTS)

    @extend_schema(
        operation_id="runs_list",
        responses=openapi.RunList,
        parameters=[
            *list_parameters(sorts=selectors.RUN_SORTS),
            query("status", one_of(*selectors.RUN_STATUSES)),
            query("dag_id", TEXT),
            query("schedule_id", TEXT),
            query("since", TIMESTAMP_OR_DATE, "started at or after"),
            query("until", TIMESTAMP_OR_DATE, "started at or before"),
        ],
    )
    def get(self, request: Request) -> Response:
        page = page_of(request.query_params)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        items, total = paged(selectors.run_list(**filters.validated_data), page)
        selectors.with_counts(items)
        return Response(list_body("runs", [run_out(r) for r in items], total, page))


class RunDetailApi(APIView):
    class FilterSerializer(QuerySerializer):
        include_tasks = QueryBooleanField(default=False)
        include_logs = QueryBooleanField(default=False)

    @extend_schema(
        responses=openapi.RunDetailOut,
        parameters=[
            query("include_tasks", BOOLEAN, "the run's task runs"),
            query("include_logs", BOOLEAN, "the task runs with their logs"),
        ],
    )
    def get(self, request: Request, run_id: str) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        include_logs = filters.validated_data["include_logs"]
        include_tasks = filters.validated_data["include_tasks"] or include_logs
        run = selectors.run_get(run_id)
        out = run_out(run)
        out["context"] = run.context
        out["versions"] = run.versions
        out["dag_version"] = run.dag_version
        if include_tasks:
            task_runs = selectors.task_runs_of(run)
            logs = selectors.logs_by_task_run([tr.id for tr in task_runs]) if include_logs else {}
            out["tasks"] = [task_run_out(tr, logs.get(tr.id) if include_logs else None) for tr in task_runs]
        return Response(out)


class RunGraphApi(APIView):
    @extend_schema(responses=openapi.GraphOut)
    def get(self, request: Request, run_id: str) -> HttpResponse:
        run = selectors.run_get(run_id)
        # PostgreSQL writes the arrays' JSON; the body is the renderer's, byte for byte
        parts = selectors.graph_json(run)
        if parts is None:
            return Response(run_graph_out(run, selectors.graph_of(run)))
        return HttpResponse(run_graph_json(run, *parts), content_type="application/json")


class TaskLogsApi(APIView):
    class FilterSerializer(QuerySerializer):
        tail = QueryIntegerField(minimum=1, maximum=100_000)
        since = QueryTimestampField()

    @extend_schema(
        responses=openapi.LogsOut,
        parameters=[
            query("tail", {"type": "integer", "minimum": 1, "maximum": 100_000}, "only the last N lines"),
            query("since", TIMESTAMP_OR_DATE, "only lines written after this time"),
        ],
    )
    def get(self, request: Request, task_run_id: str) -> Response:
        tr = selectors.task_run_get(task_run_id)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        lines, has_more = selectors.task_logs(task_run=tr, **filters.validated_data)
        return Response(task_logs_out(tr, lines, has_more=has_more))


class TaskLogStreamApi(APIView):
    """Server-sent events of a task run's output as it is written (see runs/logstream.py); the
    same role as the logs endpoint. Resumes after `Last-Event-ID` (or `?after=<id>`)."""

    renderer_classes = [JSONRenderer, logstream.EventStreamRenderer]

    def handle_exception(self, exc: Exception) -> Any:
        # Errors are the one JSON error body, also for a client that asked for the event stream.
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return super().handle_exception(exc)

    @extend_schema(
        responses={(200, "text/event-stream"): openapi.LOG_STREAM_EVENT},
        parameters=[
            query("after", {"type": "string", "pattern": "^[0-9]{1,18}$"}, "resume after this line id")
        ],
    )
    def get(self, request: Request, task_run_id: str) -> StreamingHttpResponse:
        tr = selectors.task_run_get(task_run_id)
        raw_after = request.headers.get("Last-Event-ID") or request.query_params.get("after") or "0"
        if not raw_after.isdigit() or len(raw_after) > 18:
            raise errors.ValidationFailed("after (or Last-Event-ID) must be a line id", field="after")
        stream = logstream.follow(tr.id, after_id=int(raw_after), limits=logstream.Limits.from_settings())
        response = StreamingHttpResponse(stream, content_type="text/event-stream")
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"  # nginx: pass events on as they come
        return response


class QueuePurgeApi(APIView):
    # Purge is admin-only (the role default for non-GET methods)

    @extend_schema(request=None, responses=openapi.PurgeOut)
    def post(self, request: Request, queue_name: str) -> Response:
        removed = services.queue_purge(actor=actor_name(request.user), queue=queue_name)
        return Response(
            {
                "success": True,
                "message": f"Queue {queue_name} purged ({removed} task runs).",
                "tasks_removed": removed,
            }
        )


class PoolListApi(APIView):
    @extend_schema(operation_id="pools_list", responses=openapi.PoolList, parameters=list_parameters())
    def get(self, request: Request) -> Response:
        page = page_of(request.query_params)
        pools = selectors.pool_list()
        items = [pool_out(p) for p in pools[page.offset : page.offset + page.limit]]
        return Response(list_body("pools", items, len(pools), page))


class PoolDetailApi(APIView):
    # Changing a pool is admin-only (the role default for non-GET methods)

    @extend_schema_serializer(component_name="PoolIn")
    class InputSerializer(ObjectBodySerializer):
        slots = BoundedIntegerField(
            message=f"slots is required: an integer from 0 to {MAX_SLOTS}",
            min_value=0,
            max_value=MAX_SLOTS,
            help_text="How many task runs of the pool may run at once.",
        )

    @extend_schema(responses={200: openapi.PoolOut, 201: openapi.PoolOut})
    def put(self, request: Request, name: str) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        pool, created = definitions.pool_put(
            actor=actor_name(request.user), name=name, **serializer.validated_data
        )
        return Response(pool_out(selectors.pool_state(pool)), status=201 if created else 200)
