"""Finishing automated steps (agent now, connector later) from the worker that ran them.

Each function locks the case row, then the step, and does nothing unless the step is still
active and automated: a late or duplicated worker run after a halt or an earlier finish is a no-op.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import transaction

from casemgmt.audit.services import record
from casemgmt.cases.models import Case
from casemgmt.realtime.events import broadcast_on_commit
from casemgmt.workflows.definitions import step_definition
from casemgmt.workflows.engine import workflow_advance
from casemgmt.workflows.models import CaseStep
from casemgmt.workflows.services.inbox import task_audit, task_open
from shared.api.time import now_ms

# `onFailure`: fail_case (default), skip, escalate; `fail` is an alias of fail_case.
ON_FAILURE = ("fail", "fail_case", "skip", "escalate")


def locked_automated_step(step_pk: int) -> tuple[Case, CaseStep] | None:
    case_id = CaseStep.objects.filter(pk=step_pk).values_list("case_id", flat=True).first()
    if case_id is None:
        return None
    case = (
        Case.objects.select_for_update(of=("self",), no_key=True)
        .select_related("workflow_version")
        .get(pk=case_id)
    )
    row = CaseStep.objects.select_for_update(no_key=True).get(pk=step_pk)
    if row.status != CaseStep.ACTIVE or row.is_task:
        return None
    return case, row


@transaction.atomic
def step_succeed(*, step_pk: int, result: Any, actor: Any = "system", audit: str | None = None) -> bool:
    """Stores the step's result (its `step_results` entry) and activates what follows; `audit`
    names an audit action to record the completion under (with the result)."""
    locked = locked_automated_step(step_pk)
    if locked is None:
        return False
    case, row = locked
    row.status, row.completed_at, row.error, row.result = CaseStep.COMPLETED, now_ms(), "", result
    row.save(update_fields=["status", "completed_at", "error", "result"])
    if audit:
        record(
            tenant_id=row.tenant_id,
            actor="system",
            action=audit,
            resource=f"cases/{row.case_id}/steps/{row.step_id}",
            changes={"result": result, "iteration": row.iteration},
        )
    workflow_advance(case=case, actor=actor)
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
    dependents go on), `fail_case` (default, alias `fail`) fails the step and halts the workflow.
    Every outcome is audited as `step:failed` with the error and what onFailure did."""
    step = step_definition(case, row.step_id)
    on_failure = step.get("onFailure") or "fail_case"
    on_failure = "fail_case" if on_failure not in ("skip", "escalate") else on_failure
    row.error = error[:2000]
    now = now_ms()
    record(
        tenant_id=row.tenant_id,
        actor="system",
        action="step:failed",
        resource=f"cases/{row.case_id}/steps/{row.step_id}",
        changes={"error": row.error, "onFailure": on_failure, "attempts": row.attempts},
    )
    if on_failure == "escalate":
        _escalate_to_human(case=case, row=row, step=step, now=now)
        return
    row.status, row.completed_at = (CaseStep.SKIPPED if on_failure == "skip" else CaseStep.FAILED), now
    row.save(update_fields=["error", "status", "completed_at"])
    _broadcast(case, "step:failed", {"stepId": row.step_id, "error": row.error, "onFailure": on_failure})
    if on_failure == "skip":
        workflow_advance(case=case, actor="system")
        return
    _halt_workflow(case=case, row=row)


def _halt_workflow(*, case: Case, row: CaseStep) -> None:
    """Decision (fail_case): the workflow stops for good. Its pending steps are skipped with the
    reason, so nothing activates later and no task appears; the case itself stays `active` so
    that a person can look at it and close or cancel it (case status belongs to the cases app)."""
    halted = CaseStep.objects.filter(case=case, status=CaseStep.PENDING).update(
        status=CaseStep.SKIPPED, error=f"halted: step {row.step_id} failed", completed_at=row.completed_at
    )
    record(
        tenant_id=case.tenant_id,
        actor="system",
        action="workflow:failed",
        resource=f"cases/{case.id}",
        changes={"failedStep": row.step_id, "error": row.error, "skippedSteps": halted},
    )
    _broadcast(case, "workflow:failed", {"failedStep": row.step_id, "error": row.error})


def _escalate_to_human(*, case: Case, row: CaseStep, step: dict[str, Any], now: Any) -> None:
    """The step becomes an open human task, like an activated `task` step: role, dueAt from
    slaHours (counted from the escalation), assignTo (with task:assigned), and step:activated."""
    row.role = step.get("role") or ""
    row.escalated, row.escalated_at, row.escalation_reason = True, now, row.error
    row.save(update_fields=["error", "role", "escalated", "escalated_at", "escalation_reason"])
    task_audit(row, "system", "task:escalated", {"reason": row.escalation_reason, "escalatedTo": None})
    sla = step.get("slaHours")
    due_at = now + timedelta(hours=sla) if isinstance(sla, int) and not isinstance(sla, bool) else None
    task_open(row=row, due_at=due_at, assign_to=step.get("assignTo"), actor="system")
    _broadcast(case, "step:activated", {"stepId": row.step_id})


def _broadcast(case: Case, type: str, data: dict[str, Any]) -> None:
    broadcast_on_commit(
        tenant_id=case.tenant_id, type=type, data={"caseId": str(case.id), **data}, permission="cases:read"
    )
