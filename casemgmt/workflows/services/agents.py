"""Agent steps: what a worker does before and after asking the language model."""

from __future__ import annotations

import json
from typing import Any

from django.db import transaction

from casemgmt.prompts.llm import Reply
from casemgmt.prompts.selectors import prompt_template_get_or_none
from casemgmt.templating import TemplateError, render
from casemgmt.workflows.engine import step_definition, template_context
from casemgmt.workflows.models import CaseStep
from casemgmt.workflows.services.steps import fail_locked_step, locked_automated_step, step_fail, step_succeed
from casemgmt.workflows.steps.agent import prompt_reference


class AgentStepError(Exception):
    """A failure that retrying will not fix (missing template, template that does not render)."""


def agent_step_claim_attempt(*, step_pk: int, attempt: int) -> bool:
    """Idempotency guard: only the delivery that moves `attempts` from n-1 to n runs attempt n, so a
    redelivered or duplicated message does nothing."""
    return bool(
        CaseStep.objects.filter(
            pk=step_pk, type="agent", status=CaseStep.ACTIVE, is_task=False, attempts=attempt - 1
        ).update(attempts=attempt)
    )


def agent_prompt(*, step_pk: int) -> dict[str, Any]:
    """The chat request of an agent step: rendered prompt and the template's model settings."""
    row = CaseStep.objects.select_related("case__workflow_version").get(pk=step_pk)
    step = step_definition(row.case, row.step_id)
    name, version = prompt_reference(step)
    template = prompt_template_get_or_none(tenant_id=row.tenant_id, name=name or "", version=version)
    if template is None:
        raise AgentStepError(f"prompt template {name!r} not found")
    try:
        content = render(template.template, template_context(row.case))
    except TemplateError as exc:
        raise AgentStepError(f"prompt template {name!r} did not render: {exc}") from exc
    return {
        "messages": [{"role": "user", "content": content}],
        "model": template.model or None,
        "temperature": template.temperature,
        "max_tokens": template.max_tokens,
        "json_mode": step.get("responseFormat") == "json",
    }


@transaction.atomic
def agent_step_succeed(*, step_pk: int, reply: Reply) -> None:
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


def agent_step_fail(*, step_pk: int, error: str) -> None:
    step_fail(step_pk=step_pk, error=error)
