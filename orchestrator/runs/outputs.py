"""The response bodies of the runs API: one `*_out` builder per shape."""

from __future__ import annotations

from datetime import datetime

from rest_framework.renderers import JSONRenderer

from orchestrator.runs import selectors
from orchestrator.runs.models import Run, TaskRun
from orchestrator.runs.planning import NewTaskRun
from shared.api.time import iso


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


def schedule_task_out(run: Run, task_runs: list[NewTaskRun]) -> dict:
    target = next(tr for tr in task_runs if tr.task_id == run.target_task_id)
    return {
        "success": True,
        "run_id": run.run_id,
        "dag_run_id": run.run_id,
        "task_run_id": target.id,
        "status": run.status,
        "start_time": iso(run.start_time),
    }


def schedule_dag_out(run: Run, task_runs: list[NewTaskRun]) -> dict:
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


def run_graph_json(run: Run, nodes: str, edges: str) -> bytes:
    """`run_graph_out` as the API's JSON renderer writes it, around the arrays' elements given as
    JSON text (`selectors.graph_json`)."""
    head = JSONRenderer().render({"run_id": run.run_id, "dag_id": run.dag_id})
    return b'%s,"nodes":[%s],"edges":[%s]}' % (head[:-1], nodes.encode(), edges.encode())


def task_logs_out(tr: TaskRun, lines: list[str], *, has_more: bool) -> dict:
    return {
        "task_run_id": tr.id,
        "logs": "\n".join(lines),
        "has_more": has_more,
        "truncated": tr.log_truncated,
        "start_time": iso(tr.start_time),
        "end_time": iso(tr.end_time),
    }


def run_state_out(run: Run) -> dict:
    return {"success": True, "run_id": run.run_id, "status": run.status}


def pool_out(pool: selectors.PoolState) -> dict:
    return {"name": pool.name, "slots": pool.slots, "used": pool.used, "queued": pool.queued}
