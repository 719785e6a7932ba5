import os

from celery import shared_task
from celery.signals import task_prerun
from django.db import close_old_connections

from orchestrator.runs import executor
from orchestrator.runs.wakeups import EXECUTE_OPTIONS, EXECUTE_TASK_RUN


@task_prerun.connect(weak=False)
def _fresh_connection(**kwargs) -> None:
    """With CELERY_DB_REUSE_MAX set, Celery no longer closes the connection after each task; Django
    decides instead, as between web requests: reuse within CONN_MAX_AGE, replace a broken one."""
    close_old_connections()


# Declared with the name and options its wake-ups are sent with (runs.wakeups, by name).
@shared_task(name=EXECUTE_TASK_RUN, bind=True, **EXECUTE_OPTIONS)
def execute_task_run(self, task_run_id: str, attempt: int) -> None:
    """Idempotent: the claim is a conditional UPDATE on (status=queued, attempts=attempt)."""
    agent_id = os.environ.get("ORCH_AGENT_ID") or self.request.hostname
    session = os.environ.get("ORCH_AGENT_SESSION", "")
    executor.execute(task_run_id=task_run_id, attempt=attempt, agent_id=agent_id, agent_session=session)
