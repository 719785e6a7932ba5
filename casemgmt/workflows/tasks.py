"""Celery tasks of the workflows app. Each takes ids and is idempotent (see the guards they call)."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

from casemgmt.prompts.llm import LLMBadReply, LLMNotConfigured, LLMTransient, chat_completion
from casemgmt.tenancy.background import row_task, system_task
from casemgmt.workflows import queue
from casemgmt.workflows.models import CaseStep
from casemgmt.workflows.services import control, llm_steps
from casemgmt.workflows.services.inbox import tasks_escalate_overdue
from shared import backoff

logger = logging.getLogger(__name__)


def backoff_seconds(attempt: int) -> float:
    """Exponential: base, 2*base, 4*base... capped."""
    return backoff.exponential(
        attempt, base=settings.LLM_RETRY_BASE_SECONDS, cap=settings.LLM_RETRY_MAX_SECONDS
    )


@shared_task(name=queue.LLM_STEP_RUN_TASK, ignore_result=True)
@row_task(CaseStep)
def llm_step_run(step_pk: int, attempt: int) -> None:
    claimed = llm_steps.llm_step_claim_attempt(step_pk=step_pk, attempt=attempt)
    if claimed is None:
        return  # a duplicate delivery, or the step is no longer waiting for this attempt
    attempt = claimed
    if attempt > settings.LLM_MAX_ATTEMPTS:  # earlier runs were lost (worker crashes), not failed
        llm_steps.llm_step_fail(
            step_pk=step_pk, error=f"worker lost the run (gave up after {attempt - 1} attempts)"
        )
        return
    try:
        _run_attempt(step_pk, attempt)
    except Exception as exc:
        # Anything else (database error, httpx.InvalidURL from a bad CASE_LLM_BASE_URL, a bug) would
        # otherwise leave the step active forever: it fails, as its onFailure says, with the cause.
        logger.exception("LLM step %s attempt %s raised", step_pk, attempt)
        llm_steps.llm_step_fail(step_pk=step_pk, error=f"unexpected error: {exc.__class__.__name__}: {exc}")


def _run_attempt(step_pk: int, attempt: int) -> None:
    try:
        request = llm_steps.llm_step_prompt(step_pk=step_pk)
        reply = chat_completion(**request)
    except LLMTransient as exc:
        if attempt < settings.LLM_MAX_ATTEMPTS:
            logger.warning("LLM step %s attempt %s failed (%s); retrying", step_pk, attempt, exc)
            countdown = backoff_seconds(attempt)
            llm_steps.llm_step_retry_scheduled(step_pk=step_pk, countdown=countdown)
            queue.enqueue_llm_step(step_pk, attempt=attempt + 1, countdown=countdown)
            return
        llm_steps.llm_step_fail(step_pk=step_pk, error=f"{exc} (gave up after {attempt} attempts)")
        return
    except LLMNotConfigured as exc:
        llm_steps.llm_step_fail(step_pk=step_pk, error=f"not_configured: {exc}")
        return
    except (LLMBadReply, llm_steps.LLMStepError) as exc:
        llm_steps.llm_step_fail(step_pk=step_pk, error=str(exc))
        return
    llm_steps.llm_step_succeed(step_pk=step_pk, reply=reply)


@shared_task(name=queue.HUMAN_TASKS_SWEEP_TASK, ignore_result=True)
@system_task("selects overdue human tasks of every tenant; each is escalated in its tenant")
def human_tasks_sweep() -> int:
    """Escalates human tasks past their SLA; returns how many."""
    return tasks_escalate_overdue()


@shared_task(name=queue.LLM_STEPS_SWEEP_TASK, ignore_result=True)
@system_task("selects lost LLM steps of every tenant; each run is queued and runs in its tenant")
def llm_steps_sweep() -> int:
    """Re-sends LLM steps whose run was lost (see `llm_steps.llm_steps_lost`); returns how many."""
    lost = llm_steps.llm_steps_lost()
    for step_pk, attempt in lost:
        queue.enqueue_llm_step(step_pk, attempt=attempt)
    return len(lost)


@shared_task(name=queue.DUE_STEPS_SWEEP_TASK, ignore_result=True)
@system_task("selects due timer steps of every tenant; each is fired in its tenant")
def due_steps_sweep() -> int:
    """Fires timers whose time has come and fails steps whose activation failed; returns how many.
    Two beats (or a beat restarted) may send it twice: each step is finished once."""
    return control.steps_due_fire()
