"""Celery tasks of `dag` steps: ids in, idempotent (each service is guarded by the DagRun status)."""

from __future__ import annotations

from celery import shared_task

from casemgmt.dags import queue, services
from casemgmt.dags.models import DagRun
from casemgmt.tenancy.background import row_task, system_task


@shared_task(name=queue.SCHEDULE_TASK, ignore_result=True)
@row_task(DagRun)
def schedule_dag_run(dag_run_id: str) -> None:
    services.dag_run_schedule(dag_run_id=dag_run_id)


@shared_task(name=queue.RESOLVE_TASK, ignore_result=True)
@row_task(DagRun)
def resolve_dag_run(dag_run_id: str) -> None:
    services.dag_run_resolve(dag_run_id=dag_run_id)


@shared_task(name=queue.CANCEL_TASK, ignore_result=True)
@row_task(DagRun)
def cancel_dag_run(dag_run_id: str) -> None:
    services.dag_run_cancel(dag_run_id=dag_run_id)


@shared_task(name=queue.SWEEP_TASK, ignore_result=True)
@system_task("selects due runs of every tenant; each is scheduled or resolved in its own tenant")
def dag_runs_sweep() -> int:
    """Beat: retries scheduling that failed transiently, and asks the orchestrator about runs
    whose callback is overdue (lost delivery, orchestrator down) or whose timeout passed."""
    scheduling, waiting = services.dag_runs_due()
    for dag_run_id in scheduling:
        schedule_dag_run(dag_run_id)  # in this process, in the run's tenant context
    for dag_run_id in waiting:
        resolve_dag_run(dag_run_id)
    return len(scheduling) + len(waiting)
