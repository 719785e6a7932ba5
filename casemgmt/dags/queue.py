"""Sends the Celery jobs of `dag` steps by task name. `tasks.py` registers the tasks under these
names and imports the services; the workflow step and the callback view send through this module,
which imports neither, so nothing imports the tasks module."""

from __future__ import annotations

import logging

from celery import current_app
from django.conf import settings

logger = logging.getLogger(__name__)
SCHEDULE_TASK = "casemgmt.dags.schedule_dag_run"
RESOLVE_TASK = "casemgmt.dags.resolve_dag_run"
CANCEL_TASK = "casemgmt.dags.cancel_dag_run"
SWEEP_TASK = "casemgmt.dags.dag_runs_sweep"


def _send(name: str, dag_run_id: str) -> None:
    try:
        current_app.send_task(name, args=[dag_run_id], queue=settings.DAG_QUEUE)
    except Exception:  # noqa: BLE001 - broker down (any kombu or redis error): the sweep picks the run up
        logger.warning("could not queue %s%s; the sweep will", name, (dag_run_id,))


def enqueue_schedule(dag_run_id: str) -> None:
    _send(SCHEDULE_TASK, dag_run_id)


def enqueue_resolve(dag_run_id: str) -> None:
    _send(RESOLVE_TASK, dag_run_id)


def enqueue_cancel(dag_run_id: str) -> None:
    _send(CANCEL_TASK, dag_run_id)
