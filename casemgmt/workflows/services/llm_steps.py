"""LLM steps (workflow type `agent`): what a worker does before and after asking the language model."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from casemgmt.prompts.llm import Reply
from casemgmt.prompts.selectors import prompt_template_get_or_none
from casemgmt.templating import TemplateError, render
from casemgmt.workflows.definitions import prompt_reference, step_definition
from casemgmt.workflows.engine import template_context
from casemgmt.workflows.models import CaseStep
from casemgmt.workflows.services.steps import fail_locked_step, locked_automated_step, step_fail, step_succeed
from shared.api.time import now_ms


class LLMStepError(Exception):
    """A failure that retrying will not fix (missing template, template that does not render)."""


def attempt_lease() -> timedelta:
    """How long a started attempt may run before it counts as lost: the model call's timeout plus
    a margin for rendering and saving. Past it, a redelivery or the sweep runs it again."""
    return timedelta(seconds=settings.LLM_TIMEOUT_SECONDS + ATTEMPT_MARGIN_SECONDS)


ATTEMPT_MARGIN_SECONDS = 60


@transaction.atomic
def llm_step_claim_attempt(*, step_pk: int, attempt: int) -> int | None:
    """Idempotency guard; returns the attempt number to run, or None to do nothing.

    The delivery that moves `attempts` from n-1 to n runs attempt n; a duplicate of it finds
    `attempts` already n and does nothing while that attempt's lease runs. Once the lease has
    passed (the worker died mid-call; with acks_late the message comes back, or the scan re-sends
    it) the run counts as lost and the next attempt number is started, so a crash that repeats is
    bounded by LLM_MAX_ATTEMPTS like any other failure."""
    row = (
        CaseStep.objects.select_for_update(no_key=True)
        .filter(pk=step_pk, type="agent", status=CaseStep.ACTIVE, is_task=False)
        .first()
    )
    if row is None:
        return None
    now = now_ms()
    if row.attempts == attempt - 1:
        number = attempt
    elif row.attempts >= attempt and row.attempt_deadline is not None and row.attempt_deadline < now:
        number = row.attempts + 1
    else:
        return None
    row.attempts, row.attempt_deadline = number, now + attempt_lease()
    row.save(update_fields=["attempts", "attempt_deadline"])
    return number


def llm_step_retry_scheduled(*, step_pk: int, countdown: float) -> None:
    """A retry is queued with a delay: the lease covers the wait, so the scan does not also
    re-run the step before the queued retry is due."""
    CaseStep.objects.filter(pk=step_pk, status=CaseStep.ACTIVE, is_task=False).update(
        attempt_deadline=now_ms() + timedelta(seconds=countdown) + attempt_lease()
    )


def llm_steps_lost(*, now: Any = None, limit: int = 1000) -> list[tuple[int, int]]:
    """(step pk, attempt to send) for active LLM steps whose run was lost: a lease that ran out,
    or no attempt ever started long after activation (the enqueue after commit never happened)."""
    now = now or now_ms()
    rows = CaseStep.objects.filter(type="agent", status=CaseStep.ACTIVE, is_task=False).filter(
        Q(attempt_deadline__lt=now) | Q(attempt_deadline__isnull=True, activated_at__lt=now - attempt_lease())
    )
    return [(pk, max(attempts, 1)) for pk, attempts in rows.values_list("pk", "attempts")[:limit]]


def llm_step_prompt(*, step_pk: int) -> dict[str, Any]:
    """The chat request of an LLM step: rendered prompt and the template's model settings."""
    row = CaseStep.objects.select_related("case__workflow_version").get(pk=step_pk)
    step = step_definition(row.case, row.step_id)
    name, version = prompt_reference(step)
    template = prompt_template_get_or_none(tenant_id=row.tenant_id, name=name or "", version=version)
    if template is None:
        raise LLMStepError(f"prompt template {name!r} not found")
    try:
        content = render(template.template, template_context(row.case))
    except TemplateError as exc:
        raise LLMStepError(f"prompt template {name!r} did not render: {exc}") from exc
    return {
        "messages": [{"role": "user", "content": content}],
        "model": template.model or None,
        "temperature": template.temperature,
        "max_tokens": template.max_tokens,
        "json_mode": step.get("responseFormat") == "json",
    }


@transaction.atomic
def llm_step_succeed(*, step_pk: int, reply: Reply) -> None:
    """Decision: step_results[stepId] = {<outputKey or "output">: reply, "model": model name}."""
    locked = locked_automated_step(step_pk)
    if locked is None:
        return
    case, row = locked
    step = step_definition(case, row.step_id)
    output: Any = reply.content
    if step.get("responseFormat") == "json":
        try:
            output = json.loads(reply.content)
        except ValueError:
            error = f"malformed reply: the model did not answer JSON: {reply.content[:200]!r}"
            fail_locked_step(case=case, row=row, error=error)
            return
    step_succeed(step_pk=step_pk, result={step.get("outputKey") or "output": output, "model": reply.model})


def llm_step_fail(*, step_pk: int, error: str) -> None:
    step_fail(step_pk=step_pk, error=error)
