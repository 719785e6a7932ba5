"""Celery tasks of `dag` steps: ids in, idempotent (each service is guarded by the DagRun status)."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from django.conf import settings

from casemgmt.dags import services
from casemgmt.dags.models import DagRun
from casemgmt.tenancy.background import row_task, system_task

logger = logging.getLogger(__name__)


def _send(task: Any, *args: Any) -> None:
    try:
        task.apply_async(args=list(args), queue=settings.DAG_QUEUE)
    except Exception:  # noqa: BLE001 - broker down: the periodic poll picks the run up
        logger.warning("could not queue %s%s; the poll will", task.name, args)


def enqueue_schedule(dag_run_id: str) -> None:
    _send(schedule_dag_run, dag_run_id)


def enqueue_resolve(dag_run_id: str) -> None:
    _send(resolve_dag_run, dag_run_id)


def enqueue_cancel(dag_run_id: str) -> None:
    _send(cancel_dag_run, dag_run_id)


@shared_task(name="casemgmt.dags.schedule_dag_run", ignore_result=True)
@row_task(DagRun)
def schedule_dag_run(dag_run_id: str) -> None:
    services.dag_run_schedule(dag_run_id=dag_run_id)


@shared_task(name="casemgmt.dags.resolve_dag_run", ignore_result=True)
@row_task(DagRun)
def resolve_dag_run(dag_run_id: str) -> None:
    services.dag_run_resolve(dag_run_id=dag_run_id)


@shared_task(name="casemgmt.dags.cancel_dag_run", ignore_result=True)
@row_task(DagRun)
def cancel_dag_run(dag_run_id: str) -> None:
    services.dag_run_cancel(dag_run_id=dag_run_id)


@shared_task(name="casemgmt.dags.poll_dag_runs", ignore_result=True)
@system_task("selects due runs of every tenant; each is scheduled or resolved in its own tenant")
def poll_dag_runs() -> int:
    """Beat: retries scheduling that failed transiently, and asks the orchestrator about runs
    whose callback is overdue (lost delivery, orchestrator down) or whose timeout passed."""
    scheduling, waiting = services.dag_runs_due()
    for dag_run_id in scheduling:
        schedule_dag_run(dag_run_id)  # in this process, in the run's tenant context
    for dag_run_id in waiting:
        resolve_dag_run(dag_run_id)
    return len(scheduling) + len(waiting)
