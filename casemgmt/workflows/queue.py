"""Sends the workflows app's Celery jobs by task name. `tasks.py` registers the tasks under these
names and imports the services; the step types send through this module, which imports neither,
so nothing imports the tasks module."""

from __future__ import annotations

import logging

from celery import current_app
from django.conf import settings
from kombu.exceptions import OperationalError

logger = logging.getLogger(__name__)
# The name predates the "LLM step" wording; it stays, so that retries already queued with a delay
# (persisted in the broker) still find their task after a deploy.
LLM_STEP_RUN_TASK = "casemgmt.workflows.run_agent_step"
HUMAN_TASKS_SWEEP_TASK = "casemgmt.workflows.human_tasks_sweep"
LLM_STEPS_SWEEP_TASK = "casemgmt.workflows.llm_steps_sweep"
DUE_STEPS_SWEEP_TASK = "casemgmt.workflows.due_steps_sweep"


def enqueue_llm_step(step_pk: int, *, attempt: int, countdown: float = 0) -> None:
    """Never raises for a broker outage: it runs after the step's transaction committed (a raise
    would turn a done write into an error answer), and the LLM steps sweep sends lost steps again."""
    try:
        current_app.send_task(
            LLM_STEP_RUN_TASK,
            args=[step_pk, attempt],
            countdown=countdown,
            queue=settings.WORKFLOW_AGENT_QUEUE,
        )
    except (OperationalError, OSError) as exc:
        logger.warning("Broker unavailable (%s): LLM step %s left to the sweep", exc, step_pk)
