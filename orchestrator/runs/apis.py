"""Scheduling, runs, logs, cancel, rerun, agents and queues."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from orchestrator.definitions import environment
from orchestrator.definitions.querying import list_parameters, page_of, paged, parse_bool
from orchestrator.definitions.validation import ID_RE
from orchestrator.runs import logstream, openapi, selectors, services
from orchestrator.runs.idempotency import idempotent
from orchestrator.runs.models import Run, TaskRun
from orchestrator.runs.planning import ScheduleOptions
from orchestrator.security.principals import actor_name
from shared.api import errors
from shared.api.openapi import BOOLEAN, TEXT, TIMESTAMP_OR_DATE, errors_also, one_of, query
from shared.api.pagination import list_body
from shared.api.problems import Problems, ProblemsSerializer
from shared.api.time import iso

OPERATOR_POST = {"POST": "operator"}  # operators may schedule, cancel and rerun
RUN_ID_RE = re.compile(openapi.RUN_ID_PATTERN)
MAX_TIMEOUT = openapi.MAX_TIMEOUT
MAX_RETRIES = openapi.MAX_RETRIES
MAX_RETRY_DELAY = openapi.MAX_RETRY_DELAY
MAX_PRIORITY = openapi.MAX_PRIORITY


def _integer(p: Problems, body: dict, name: str, *, minimum: int, maximum: int) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum or value > maximum:
        kind = "a positive integer" if minimum == 1 else "a non-negative integer"
        p.add(name, f"{name} must be {kind} (at most {maximum})")
        return None
    return value


def read_options(body: dict, p: Problems) -> ScheduleOptions:
    """The body fields schedule-task and schedule-dag share."""
    opts = ScheduleOptions()
    run_id = body.get("run_id")
    if run_id is not None and (not isinstance(run_id, str) or not RUN_ID_RE.match(run_id)):
        p.add("run_id", "must be 1-128 characters of letters, digits, '_', '.', ':', '-'")
    else:
        opts.run_id = run_id
    opts.context = p.string(body, "context") or None
    opts.env_vars = environment.check_map(p, body.get("env_vars"), "env_vars")
    raw_params = body.get("parameters")
    if raw_params is not None and not isinstance(raw_params, dict):
        p.add("parameters", "must be an object of string values")
    else:
        opts.parameters = raw_params or {}
    # timeout_seconds is a positive integer (400 with details.field otherwise)
    opts.timeout_seconds = _integer(p, body, "timeout_seconds", minimum=1, maximum=MAX_TIMEOUT)
    opts.retries = _integer(p, body, "retries", minimum=0, maximum=MAX_RETRIES) or 0
    opts.retry_delay_seconds = (
        _integer(p, body, "retry_delay_seconds", minimum=0, maximum=MAX_RETRY_DELAY) or 0
    )
    opts.parameter_set = p.string(body, "parameter_set") or None
    priority = body.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int) or abs(priority) > MAX_PRIORITY:
        p.add("priority", f"priority must be an integer from -{MAX_PRIORITY} to {MAX_PRIORITY}")
    else:
        opts.priority = priority
    return opts


def _required_id(body: dict, field: str, *, task: bool) -> str:
    """A missing or malformed id is reported alone, before the other fields are read."""
    value = body.get(field)
    if not isinstance(value, str) or not (ID_RE.match(value) if task else value):
        message = f"{field} is required and must be a task id" if task else f"{field} is required"
        raise errors.ValidationFailed(message, field=field)
    return value


def duration(start: datetime | None, end: datetime | None) -> int | None:
    return int((end - start).total_seconds()) if start and end else None


def run_out(run: Run) -> dict:
    return {
        "run_id": run.run_id,
        "dag_id": run.dag_id,
        "status": run.status,
        "start_time": iso(run.start_time),
        "end_time": iso(run.end_time),
        "duration_seconds": duration(run.start_time, run.end_time),
        "task_count": run.task_count,
        "completed_tasks": run.completed_tasks,
        "failed_tasks": run.failed_tasks,
        "original_run_id": run.original_run_id,
        "priority": run.priority,
        "schedule_id": run.schedule_id,
        "fire_time": iso(run.fire_time),
    }


def task_run_out(tr: TaskRun, logs: str | None = None) -> dict:
    out = {
        "task_id": tr.task_id,
        "task_run_id": tr.id,
        "status": tr.status,
        "start_time": iso(tr.start_time),
        "end_time": iso(tr.end_time),
        "duration_seconds": duration(tr.start_time, tr.end_time),
        "attempts": tr.attempts,
        "queue": tr.queue,
        "exit_code": tr.exit_code,
    }
    if logs is not None:
        out["logs"] = logs
    return out


def queue_out(queue: selectors.QueueState) -> dict:
    return {
        "name": queue.name,
        "length": len(queue.queued),
        "consumer_count": queue.consumer_count,
        "tasks": [
            {"task_run_id": task_run_id, "dag_run_id": run_id, "position": position}
            for position, (task_run_id, run_id) in enumerate(queue.queued)
        ],
    }


def schedule_task_out(run: Run, task_runs: list[TaskRun]) -> dict:
    target = next(tr for tr in task_runs if tr.task_id == run.target_task_id)
    return {
        "success": True,
        "run_id": run.run_id,
        "dag_run_id": run.run_id,
        "task_run_id": target.id,
        "status": run.status,
        "start_time": iso(run.start_time),
    }


def schedule_dag_out(run: Run, task_runs: list[TaskRun]) -> dict:
    return {
        "success": True,
        "run_id": run.run_id,
        "status": run.status,
        "start_time": iso(run.start_time),
        "tasks": [{"id": tr.task_id, "task_run_id": tr.id, "status": tr.status} for tr in task_runs],
    }


def rerun_out(run: Run) -> dict:
    return {
        "success": True,
        "new_run_id": run.run_id,
        "original_run_id": run.original_run_id,
        "status": run.status,
        "start_time": iso(run.start_time),
    }


def run_graph_out(run: Run, rows: list[tuple[str, str, str, list[str]]]) -> dict:
    return {
        "run_id": run.run_id,
        "dag_id": run.dag_id,
        "nodes": [{"id": pk, "task_id": task_id, "status": status} for pk, task_id, status, _ in rows],
        "edges": [{"from": up, "to": pk} for pk, _, _, upstream in rows for up in upstream],
    }


def task_logs_out(tr: TaskRun, lines: list[str], *, has_more: bool) -> dict:
    return {
        "task_run_id": tr.id,
        "logs": "\n".join(lines),
        "has_more": has_more,
        "truncated": tr.log_truncated,
        "start_time": iso(tr.start_time),
        "end_time": iso(tr.end_time),
    }


class ScheduleTaskApi(APIView):
    min_role = OPERATOR_POST

    class InputSerializer(ProblemsSerializer):
        def read(self, body: dict, problems: Problems) -> dict[str, Any]:
            task_id = _required_id(body, "task_id", task=True)
            options = read_options(body, problems)
            return {"task_id": task_id, "options": options, "queue": problems.string(body, "queue") or None}

    @extend_schema(
        parameters=[openapi.IDEMPOTENCY_KEY],
        request=openapi.ScheduleTaskIn,
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

    class InputSerializer(ProblemsSerializer):
        def read(self, body: dict, problems: Problems) -> dict[str, Any]:
            dag_id = _required_id(body, "dag_id", task=False)
            return {"dag_id": dag_id, "options": read_options(body, problems)}

    @extend_schema(
        parameters=[openapi.IDEMPOTENCY_KEY],
        request=openapi.ScheduleDagIn,
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

    @extend_schema(
        request=None,
        responses=openapi.CancelOut,
        parameters=[query("force", BOOLEAN, "also mark task runs whose agent does not answer")],
    )
    def post(self, request: Request, run_id: str) -> Response:
        force = parse_bool(request.query_params, "force")
        if isinstance(request.data, dict) and isinstance(request.data.get("force"), bool):
            force = force or request.data["force"]
        cancelled = services.run_cancel(actor=actor_name(request.user), run_id=run_id, force=force)
        return Response(
            {"success": True, "message": f"Run {run_id} cancelled ({cancelled} task runs).", "run_id": run_id}
        )


def run_state_out(run: Run) -> dict:
    return {"success": True, "run_id": run.run_id, "status": run.status}


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

    class InputSerializer(ProblemsSerializer):
        def read(self, body: dict, problems: Problems) -> dict[str, Any]:
            flags = {}
            for name in ("failed_only", "reset_params", "latest"):
                value = body.get(name, False)
                if not isinstance(value, bool):
                    problems.add(name, "must be a boolean")
                flags[name] = value is True
            from_task = body.get("from_task")
            if from_task is not None and not isinstance(from_task, str):
                problems.add("from_task", "must be a task id")
            return {**flags, "from_task": from_task}

    @extend_schema(
        parameters=[openapi.IDEMPOTENCY_KEY], request=openapi.RerunIn, responses={201: openapi.RerunOut}
    )
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
        items, total = paged(selectors.run_list(params=request.query_params), page)
        selectors.with_counts(items)
        return Response(list_body("runs", [run_out(r) for r in items], total, page))


class RunDetailApi(APIView):
    @extend_schema(
        responses=openapi.RunDetailOut,
        parameters=[
            query("include_tasks", BOOLEAN, "the run's task runs"),
            query("include_logs", BOOLEAN, "the task runs with their logs"),
        ],
    )
    def get(self, request: Request, run_id: str) -> Response:
        include_logs = parse_bool(request.query_params, "include_logs")
        include_tasks = parse_bool(request.query_params, "include_tasks") or include_logs
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
    def get(self, request: Request, run_id: str) -> Response:
        run = selectors.run_get(run_id)
        return Response(run_graph_out(run, selectors.graph_of(run)))


class TaskLogsApi(APIView):
    @extend_schema(
        responses=openapi.LogsOut,
        parameters=[
            query("tail", {"type": "integer", "minimum": 1, "maximum": 100_000}, "only the last N lines"),
            query("since", TIMESTAMP_OR_DATE, "only lines written after this time"),
        ],
    )
    def get(self, request: Request, task_run_id: str) -> Response:
        tr = selectors.task_run_get(task_run_id)
        lines, has_more = selectors.task_logs(task_run=tr, params=request.query_params)
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
        responses={(200, "text/event-stream"): str},
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


class QueueListApi(APIView):
    @extend_schema(operation_id="queues_list", responses=openapi.QueueList, parameters=list_parameters())
    def get(self, request: Request) -> Response:
        page = page_of(request.query_params)
        queues = selectors.queue_overview()
        items = [queue_out(q) for q in queues[page.offset : page.offset + page.limit]]
        return Response(list_body("queues", items, len(queues), page))


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
