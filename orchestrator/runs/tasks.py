import os

from celery import shared_task
from celery.signals import task_prerun
from django.db import close_old_connections

from orchestrator.runs import executor


@task_prerun.connect(weak=False)
def _fresh_connection(**kwargs) -> None:
    """With CELERY_DB_REUSE_MAX set, Celery no longer closes the connection after each task; Django
    decides instead, as between web requests: reuse within CONN_MAX_AGE, replace a broken one."""
    close_old_connections()


# A long command must not be cut by Celery's global time limit: the task run's own
# `timeout_seconds` governs it (and the sweeper covers a worker that dies).
DAY = 24 * 3600


@shared_task(
    name="orchestrator.runs.execute_task_run",
    ignore_result=True,
    time_limit=DAY,
    soft_time_limit=DAY - 60,
    bind=True,
)
def execute_task_run(self, task_run_id: str, attempt: int) -> None:
    """Idempotent: the claim is a conditional UPDATE on (status=queued, attempts=attempt)."""
    agent_id = os.environ.get("ORCH_AGENT_ID") or self.request.hostname
    session = os.environ.get("ORCH_AGENT_SESSION", "")
    executor.execute(task_run_id=task_run_id, attempt=attempt, agent_id=agent_id, agent_session=session)
