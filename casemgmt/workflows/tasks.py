"""Celery tasks of the workflows app. Each takes ids and is idempotent (see the guards they call)."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

from casemgmt.prompts.llm import LLMBadReply, LLMNotConfigured, LLMTransient, chat_completion
from casemgmt.workflows.services import agents
from casemgmt.workflows.services.tasks import tasks_escalate_overdue

logger = logging.getLogger(__name__)


def enqueue_agent_step(step_pk: int, *, attempt: int, countdown: float = 0) -> None:
    run_agent_step.apply_async(
        args=[step_pk, attempt], countdown=countdown, queue=settings.WORKFLOW_AGENT_QUEUE
    )


def backoff_seconds(attempt: int) -> float:
    """Exponential: base, 2*base, 4*base... capped."""
    return min(settings.LLM_RETRY_BASE_SECONDS * 2 ** (attempt - 1), settings.LLM_RETRY_MAX_SECONDS)


@shared_task(name="casemgmt.workflows.run_agent_step", ignore_result=True)
def run_agent_step(step_pk: int, attempt: int) -> None:
    if not agents.agent_step_claim_attempt(step_pk=step_pk, attempt=attempt):
        return  # a duplicate delivery, or the step is no longer waiting for this attempt
    try:
        request = agents.agent_prompt(step_pk=step_pk)
        reply = chat_completion(**request)
    except LLMTransient as exc:
        if attempt < settings.LLM_MAX_ATTEMPTS:
            logger.warning("agent step %s attempt %s failed (%s); retrying", step_pk, attempt, exc)
            enqueue_agent_step(step_pk, attempt=attempt + 1, countdown=backoff_seconds(attempt))
            return
        agents.agent_step_fail(step_pk=step_pk, error=f"{exc} (gave up after {attempt} attempts)")
        return
    except LLMNotConfigured as exc:
        agents.agent_step_fail(step_pk=step_pk, error=f"not_configured: {exc}")
        return
    except (LLMBadReply, agents.AgentStepError) as exc:
        agents.agent_step_fail(step_pk=step_pk, error=str(exc))
        return
    agents.agent_step_succeed(step_pk=step_pk, reply=reply)


@shared_task(name="casemgmt.workflows.escalate_overdue_tasks", ignore_result=True)
def escalate_overdue_tasks() -> int:
    return tasks_escalate_overdue()
