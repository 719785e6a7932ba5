"""Scheduling, runs, logs, cancel, rerun, agents and queues."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from orchestrator.definitions.querying import list_body, page_of, paged, parse_bool
from orchestrator.definitions.validation import require_object
from orchestrator.runs import schemas, selectors, services
from orchestrator.runs.models import Run, TaskRun
from shared.api.time import iso

OPERATOR_POST = {"POST": "operator"}  # operators may schedule, cancel and rerun


def duration(start, end) -> int | None:
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


class ScheduleTaskApi(APIView):
    min_role = OPERATOR_POST

    @extend_schema(request=schemas.ScheduleTaskIn, responses={201: schemas.ScheduleTaskOut})
    def post(self, request: Request) -> Response:
        run, task_runs = services.run_schedule_task(body=require_object(request.data))
        target = next(tr for tr in task_runs if tr.task_id == run.target_task_id)
        return Response(
            {
                "success": True,
                "run_id": run.run_id,
                "dag_run_id": run.run_id,
                "task_run_id": target.id,
                "status": run.status,
                "start_time": iso(run.start_time),
            },
            status=201,
        )


class ScheduleDagApi(APIView):
    min_role = OPERATOR_POST

    @extend_schema(request=schemas.ScheduleDagIn, responses={201: schemas.ScheduleDagOut})
    def post(self, request: Request) -> Response:
        run, task_runs = services.run_schedule_dag(body=require_object(request.data))
        return Response(
            {
                "success": True,
                "run_id": run.run_id,
                "status": run.status,
                "start_time": iso(run.start_time),
                "tasks": [{"id": tr.task_id, "task_run_id": tr.id, "status": tr.status} for tr in task_runs],
            },
            status=201,
        )


class RunCancelApi(APIView):
    min_role = OPERATOR_POST

    @extend_schema(request=None, responses=schemas.CancelOut)
    def post(self, request: Request, run_id: str) -> Response:
        force = parse_bool(request.query_params, "force")
        if isinstance(request.data, dict) and isinstance(request.data.get("force"), bool):
            force = force or request.data["force"]
        cancelled = services.run_cancel(run_id=run_id, force=force)
        return Response(
            {"success": True, "message": f"Run {run_id} cancelled ({cancelled} task runs).", "run_id": run_id}
        )


class RunRerunApi(APIView):
    min_role = OPERATOR_POST

    @extend_schema(request=schemas.RerunIn, responses={201: schemas.RerunOut})
    def post(self, request: Request, run_id: str) -> Response:
        body = request.data if request.data else {}
        run = services.run_rerun(run_id=run_id, body=require_object(body))
        return Response(
            {
                "success": True,
                "new_run_id": run.run_id,
                "original_run_id": run_id,
                "status": run.status,
                "start_time": iso(run.start_time),
            },
            status=201,
        )


class RunListApi(APIView):
    @extend_schema(operation_id="runs_list", responses=schemas.RunList)
    def get(self, request: Request) -> Response:
        page = page_of(request.query_params)
        items, total = paged(selectors.run_list(params=request.query_params), page)
        selectors.with_counts(items)
        return Response(list_body("runs", [run_out(r) for r in items], total, page))


class RunDetailApi(APIView):
    @extend_schema(responses=schemas.RunDetailOut)
    def get(self, request: Request, run_id: str) -> Response:
        include_logs = parse_bool(request.query_params, "include_logs")
        include_tasks = parse_bool(request.query_params, "include_tasks") or include_logs
        run = selectors.run_get(run_id)
        out = run_out(run)
        out["context"] = run.context
        if include_tasks:
            task_runs = selectors.task_runs_of(run)
            logs = selectors.logs_by_task_run([tr.id for tr in task_runs]) if include_logs else {}
            out["tasks"] = [task_run_out(tr, logs.get(tr.id) if include_logs else None) for tr in task_runs]
        return Response(out)


class RunGraphApi(APIView):
    @extend_schema(responses=schemas.GraphOut)
    def get(self, request: Request, run_id: str) -> Response:
        run = selectors.run_get(run_id)
        task_runs = selectors.task_runs_of(run)
        return Response(
            {
                "run_id": run.run_id,
                "dag_id": run.dag_id,
                "nodes": [{"id": tr.id, "task_id": tr.task_id, "status": tr.status} for tr in task_runs],
                "edges": [{"from": up, "to": tr.id} for tr in task_runs for up in tr.upstream],
            }
        )


class TaskLogsApi(APIView):
    @extend_schema(responses=schemas.LogsOut)
    def get(self, request: Request, task_run_id: str) -> Response:
        tr = selectors.task_run_get(task_run_id)
        lines, has_more = selectors.task_logs(task_run=tr, params=request.query_params)
        return Response(
            {
                "task_run_id": tr.id,
                "logs": "\n".join(lines),
                "has_more": has_more,
                "truncated": tr.log_truncated,
                "start_time": iso(tr.start_time),
                "end_time": iso(tr.end_time),
            }
        )


class QueueListApi(APIView):
    @extend_schema(responses=schemas.QueueList)
    def get(self, request: Request) -> Response:
        return Response({"queues": selectors.queue_overview()})


class QueuePurgeApi(APIView):
    # Purge is admin-only (the role default for non-GET methods)

    @extend_schema(request=None, responses=schemas.PurgeOut)
    def post(self, request: Request, queue_name: str) -> Response:
        removed = services.queue_purge(queue=queue_name)
        return Response(
            {
                "success": True,
                "message": f"Queue {queue_name} purged ({removed} task runs).",
                "tasks_removed": removed,
            }
        )
