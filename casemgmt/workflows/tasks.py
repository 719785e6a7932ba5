"""Celery tasks of the workflows app. Each takes ids and is idempotent (see the guards they call)."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from kombu.exceptions import OperationalError

from casemgmt.prompts.llm import LLMBadReply, LLMNotConfigured, LLMTransient, chat_completion
from casemgmt.tenancy.background import row_task, system_task
from casemgmt.workflows.models import CaseStep
from casemgmt.workflows.services import agents
from casemgmt.workflows.services.inbox import tasks_escalate_overdue
from shared import backoff

logger = logging.getLogger(__name__)


def enqueue_agent_step(step_pk: int, *, attempt: int, countdown: float = 0) -> None:
    """Never raises for a broker outage: it runs after the step's transaction committed (a raise
    would turn a done write into an error answer), and the periodic scan sends lost steps again."""
    try:
        run_agent_step.apply_async(
            args=[step_pk, attempt], countdown=countdown, queue=settings.WORKFLOW_AGENT_QUEUE
        )
    except (OperationalError, OSError) as exc:
        logger.warning("Broker unavailable (%s): agent step %s left to the periodic scan", exc, step_pk)


def backoff_seconds(attempt: int) -> float:
    """Exponential: base, 2*base, 4*base... capped."""
    return backoff.exponential(
        attempt, base=settings.LLM_RETRY_BASE_SECONDS, cap=settings.LLM_RETRY_MAX_SECONDS
    )


@shared_task(name="casemgmt.workflows.run_agent_step", ignore_result=True)
@row_task(CaseStep)
def run_agent_step(step_pk: int, attempt: int) -> None:
    claimed = agents.agent_step_claim_attempt(step_pk=step_pk, attempt=attempt)
    if claimed is None:
        return  # a duplicate delivery, or the step is no longer waiting for this attempt
    attempt = claimed
    if attempt > settings.LLM_MAX_ATTEMPTS:  # earlier runs were lost (worker crashes), not failed
        agents.agent_step_fail(
            step_pk=step_pk, error=f"worker lost the run (gave up after {attempt - 1} attempts)"
        )
        return
    try:
        _run_attempt(step_pk, attempt)
    except Exception as exc:
        # Anything else (database error, httpx.InvalidURL from a bad CASE_LLM_BASE_URL, a bug) would
        # otherwise leave the step active forever: it fails, as its onFailure says, with the cause.
        logger.exception("agent step %s attempt %s raised", step_pk, attempt)
        agents.agent_step_fail(step_pk=step_pk, error=f"unexpected error: {exc.__class__.__name__}: {exc}")


def _run_attempt(step_pk: int, attempt: int) -> None:
    try:
        request = agents.agent_prompt(step_pk=step_pk)
        reply = chat_completion(**request)
    except LLMTransient as exc:
        if attempt < settings.LLM_MAX_ATTEMPTS:
            logger.warning("agent step %s attempt %s failed (%s); retrying", step_pk, attempt, exc)
            countdown = backoff_seconds(attempt)
            agents.agent_step_retry_scheduled(step_pk=step_pk, countdown=countdown)
            enqueue_agent_step(step_pk, attempt=attempt + 1, countdown=countdown)
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
@system_task("selects overdue tasks and lost agent steps of every tenant; each is handled in its tenant")
def escalate_overdue_tasks() -> int:
    # The periodic scan also re-sends agent steps whose run was lost (see agents.agent_steps_lost).
    for step_pk, attempt in agents.agent_steps_lost():
        enqueue_agent_step(step_pk, attempt=attempt)
    return tasks_escalate_overdue()
