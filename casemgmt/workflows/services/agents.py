"""Agent steps: what a worker does before and after asking the language model."""

from __future__ import annotations

import json
from typing import Any

from django.db import transaction

from casemgmt.cases.models import Case
from casemgmt.prompts.llm import Reply
from casemgmt.prompts.selectors import prompt_template_get_or_none
from casemgmt.templating import TemplateError, render
from casemgmt.workflows.engine import step_definition, template_context, workflow_advance
from casemgmt.workflows.models import CaseStep
from casemgmt.workflows.services.tasks import _audit
from casemgmt.workflows.steps.agent import prompt_reference
from shared.api.time import now_ms


class AgentStepError(Exception):
    """A failure that retrying will not fix (bad template, unparseable JSON reply...)."""


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


def _locked_active(step_pk: int) -> tuple[Case, CaseStep] | None:
    row = CaseStep.objects.get(pk=step_pk)
    case = Case.objects.select_for_update(of=("self",)).select_related("workflow_version").get(pk=row.case_id)
    row = CaseStep.objects.select_for_update().get(pk=step_pk)
    if row.status != CaseStep.ACTIVE or row.is_task:
        return None  # halted (case closed) or already finished by an earlier delivery
    return case, row


@transaction.atomic
def agent_step_succeed(*, step_pk: int, reply: Reply) -> None:
    locked = _locked_active(step_pk)
    if locked is None:
        return
    case, row = locked
    step = step_definition(case, row.step_id)
    output: Any = reply.content
    if step.get("responseFormat") == "json":
        try:
            output = json.loads(reply.content)
        except ValueError:
            _fail(case, row, step, f"malformed reply: the model did not answer JSON: {reply.content[:200]!r}")
            return
    row.status, row.completed_at, row.error = CaseStep.COMPLETED, now_ms(), ""
    row.result = {step.get("outputKey") or "output": output, "model": reply.model}
    row.save(update_fields=["status", "completed_at", "error", "result"])
    workflow_advance(case=case, actor="system")


@transaction.atomic
def agent_step_fail(*, step_pk: int, error: str) -> None:
    locked = _locked_active(step_pk)
    if locked is None:
        return
    case, row = locked
    _fail(case, row, step_definition(case, row.step_id), error)


def _fail(case: Case, row: CaseStep, step: dict[str, Any], error: str) -> None:
    """`onFailure: escalate` turns the step into a human task; otherwise the step fails."""
    row.error = error[:2000]
    if step.get("onFailure") == "escalate":
        now = now_ms()
        row.is_task, row.role = True, step.get("role") or ""
        row.escalated, row.escalated_at, row.escalation_reason = True, now, error[:2000]
        row.save(update_fields=["error", "is_task", "role", "escalated", "escalated_at", "escalation_reason"])
        _audit(row, "system", "task:escalated", {"reason": row.escalation_reason, "escalatedTo": None})
        return
    row.status, row.completed_at = CaseStep.FAILED, now_ms()
    row.save(update_fields=["error", "status", "completed_at"])
