"""Finishing automated steps (agent now, connector later) from the worker that ran them.

Each function locks the case row, then the step, and does nothing unless the step is still
active and automated: a late or duplicated worker run after a halt or an earlier finish is a no-op.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from casemgmt.cases.models import Case
from casemgmt.workflows.engine import step_definition, workflow_advance
from casemgmt.workflows.models import CaseStep
from casemgmt.workflows.services.tasks import _audit
from shared.api.time import now_ms

# CONTRACT connector `onFailure`: fail_case, skip, escalate; agent steps use fail (default), skip, escalate.
ON_FAILURE = ("fail", "fail_case", "skip", "escalate")


def locked_automated_step(step_pk: int) -> tuple[Case, CaseStep] | None:
    case_id = CaseStep.objects.filter(pk=step_pk).values_list("case_id", flat=True).first()
    if case_id is None:
        return None
    case = Case.objects.select_for_update(of=("self",)).select_related("workflow_version").get(pk=case_id)
    row = CaseStep.objects.select_for_update().get(pk=step_pk)
    if row.status != CaseStep.ACTIVE or row.is_task:
        return None
    return case, row


@transaction.atomic
def step_succeed(*, step_pk: int, result: Any) -> bool:
    """Stores the step's result (its `step_results` entry) and activates what follows."""
    locked = locked_automated_step(step_pk)
    if locked is None:
        return False
    case, row = locked
    row.status, row.completed_at, row.error, row.result = CaseStep.COMPLETED, now_ms(), "", result
    row.save(update_fields=["status", "completed_at", "error", "result"])
    workflow_advance(case=case, actor="system")
    return True


@transaction.atomic
def step_fail(*, step_pk: int, error: str) -> bool:
    locked = locked_automated_step(step_pk)
    if locked is None:
        return False
    case, row = locked
    fail_locked_step(case=case, row=row, error=error)
    return True


def fail_locked_step(*, case: Case, row: CaseStep, error: str) -> None:
    """As the step's `onFailure` says: `escalate` turns it into a human task, `skip` skips it (its
    dependents go on), anything else marks it failed (the workflow stops there)."""
    on_failure = step_definition(case, row.step_id).get("onFailure") or "fail"
    row.error = error[:2000]
    now = now_ms()
    if on_failure == "escalate":
        row.is_task, row.role = True, step_definition(case, row.step_id).get("role") or ""
        row.escalated, row.escalated_at, row.escalation_reason = True, now, row.error
        row.save(update_fields=["error", "is_task", "role", "escalated", "escalated_at", "escalation_reason"])
        _audit(row, "system", "task:escalated", {"reason": row.escalation_reason, "escalatedTo": None})
        return
    row.status, row.completed_at = (CaseStep.SKIPPED if on_failure == "skip" else CaseStep.FAILED), now
    row.save(update_fields=["error", "status", "completed_at"])
    if on_failure == "skip":
        workflow_advance(case=case, actor="system")
