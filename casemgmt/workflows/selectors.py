"""Reads of per-case workflow state used by the cases app (case detail, list items)."""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import F, Q

from casemgmt.workflows.models import CaseStep
from shared.api.errors import NotFound, ValidationFailed
from shared.api.time import iso, parse_iso


def step_detail(step: CaseStep) -> dict[str, Any]:
    detail: dict[str, Any] = {
        "id": step.step_id,
        "name": step.name,
        "type": step.type,
        "status": step.status,
        "activatedAt": iso(step.activated_at),
    }
    if step.completed_at is not None:  # spec: completedAt absent while active
        detail["completedAt"] = iso(step.completed_at)
    return detail


def case_workflow_detail(case: Any) -> dict[str, Any] | None:
    """The `workflow` object of GET /cases/{id}: {id, version, steps[]}, or None without a workflow."""
    if case.workflow_version_id is None:
        return None
    steps = CaseStep.objects.filter(case=case).order_by("position")
    return {
        "id": str(case.workflow_version_id),
        "version": case.workflow_version.version,
        "steps": [step_detail(step) for step in steps],
    }


def case_current_step(case: Any) -> str | None:
    """Name of the first active step (list item `currentStep`), or None."""
    step = CaseStep.objects.filter(case=case, status=CaseStep.ACTIVE).order_by("position").first()
    return step.name if step else None


def step_results(case: Any) -> dict[str, Any]:
    """`step_results` for templates and conditions: outputs keyed by step id."""
    rows = CaseStep.objects.filter(case=case, status=CaseStep.COMPLETED).values_list("step_id", "result")
    return {step_id: result for step_id, result in rows}


# ---------------------------------------------------------------------------- definitions


def workflow_list(*, tenant_id: Any, params: Any) -> Any:
    from casemgmt.workflows.models import Workflow

    workflows = Workflow.objects.filter(tenant_id=tenant_id)
    if params.get("caseTypeKey"):
        workflows = workflows.filter(case_type_key=params["caseTypeKey"])
    if params.get("status"):
        if params["status"] not in (Workflow.DRAFT, Workflow.PUBLISHED, Workflow.WITHDRAWN):
            raise ValidationFailed("status must be draft, published or withdrawn", field="status")
        workflows = workflows.filter(status=params["status"])
    return workflows.order_by("-created_at", "-id")  # newest first; id keeps ties stable


def workflow_get(*, tenant_id: Any, workflow_id: Any) -> Any:
    from casemgmt.workflows.models import Workflow

    workflow = Workflow.objects.filter(tenant_id=tenant_id, id=workflow_id).first()
    if workflow is None:
        raise NotFound("Workflow not found.")
    return workflow


# ---------------------------------------------------------------------------- tasks

# createdAt (the default): newest first. dueDate: soonest due first, undated last. caseType: by key.
# Ties: newest first, then by id, so paging is stable.
NEWEST_FIRST = (F("activated_at").desc(nulls_last=True), "-pk")
INBOX_SORTS = {
    "dueDate": (F("due_at").asc(nulls_last=True), *NEWEST_FIRST),
    "createdAt": NEWEST_FIRST,
    "caseType": ("case__case_type__key", *NEWEST_FIRST),
}


# Only an active task step (open) or a completed one (history) is a task: a pending step was
# never activated, and a skipped or failed one (halted case, false condition) is no longer open.
TASK_STATUSES = (CaseStep.ACTIVE, CaseStep.COMPLETED)


def task_status(row: CaseStep) -> str:
    if row.status == CaseStep.COMPLETED:
        return "completed"
    if row.status != CaseStep.ACTIVE:
        return row.status  # not served by the task endpoints; truthful if ever shown
    return "claimed" if row.assigned_to_id else "unclaimed"


def _visible_to(user: Any) -> Q:
    """Decision: a user sees the open tasks it holds or may claim (no role, or a role it holds),
    and the completed tasks it holds or completed."""
    open_claimable = Q(status=CaseStep.ACTIVE) & (
        Q(assigned_to=user) | Q(assigned_to__isnull=True) & (Q(role="") | Q(role__in=user.role_names))
    )
    done = Q(status=CaseStep.COMPLETED) & (Q(assigned_to=user) | Q(completed_by=user))
    return open_claimable | done


def task_inbox(*, user: Any, params: Any) -> Any:
    tasks = CaseStep.objects.filter(tenant_id=user.tenant_id, is_task=True, status__in=TASK_STATUSES)
    tasks = tasks.filter(_visible_to(user))
    status = params.get("status")
    if status == "claimed":
        tasks = tasks.filter(status=CaseStep.ACTIVE, assigned_to__isnull=False)
    elif status == "unclaimed":
        tasks = tasks.filter(status=CaseStep.ACTIVE, assigned_to__isnull=True)
    elif status == "completed":
        tasks = tasks.filter(status=CaseStep.COMPLETED)
    elif status:
        raise ValidationFailed("status must be claimed, unclaimed or completed", field="status")
    else:
        tasks = tasks.filter(status=CaseStep.ACTIVE)  # decision: the inbox shows open tasks by default
    if params.get("dueBefore"):
        tasks = tasks.filter(due_at__lt=parse_iso(params["dueBefore"], "dueBefore"))
    if params.get("dueAfter"):
        tasks = tasks.filter(due_at__gt=parse_iso(params["dueAfter"], "dueAfter"))
    if params.get("caseId"):
        try:
            tasks = tasks.filter(case_id=uuid.UUID(params["caseId"]))
        except ValueError:
            raise ValidationFailed("caseId must be a UUID", field="caseId") from None
    sort = params.get("sortBy") or "createdAt"
    if sort not in INBOX_SORTS:
        raise ValidationFailed("sortBy must be dueDate, createdAt or caseType", field="sortBy")
    return tasks.select_related("case__case_type", "case__workflow_version").order_by(*INBOX_SORTS[sort])


def task_get(*, user: Any, case_id: Any, step_id: str) -> CaseStep:
    row = (
        CaseStep.objects.select_related("case__case_type", "case__workflow_version")
        .filter(
            tenant_id=user.tenant_id, case_id=case_id, step_id=step_id, is_task=True, status__in=TASK_STATUSES
        )
        .first()
    )
    if row is None:
        raise NotFound("Task not found.")
    return row


def task_detail(row: CaseStep, *, full: bool = False) -> dict[str, Any]:
    from casemgmt.workflows.engine import step_definition

    case = row.case
    step = step_definition(case, row.step_id)
    detail: dict[str, Any] = {
        "caseId": str(case.id),
        "stepId": row.step_id,
        "stepName": row.name,
        "caseType": case.case_type.key,
        "caseNumber": case.case_number,
        "caseSummary": {
            "caseNumber": case.case_number,
            "displayName": case.display_name,
            "status": case.status,
        },
        "status": task_status(row),
        "createdAt": iso(row.activated_at),
        "dueAt": iso(row.due_at),
        "assignedTo": str(row.assigned_to_id) if row.assigned_to_id else None,
        "role": row.role or None,
        "formSchema": step.get("formSchema") or {"type": "object"},
        "outcomes": step.get("outcomes"),
        "escalated": row.escalated,
        "escalatedAt": iso(row.escalated_at),
        "escalationReason": row.escalation_reason or None,
        "escalatedTo": str(row.escalated_to_id) if row.escalated_to_id else None,
        "draft": draft_record(row),
        "outcome": row.outcome or None,
        "completedAt": iso(row.completed_at) if row.status == CaseStep.COMPLETED else None,
        "completedBy": str(row.completed_by_id) if row.completed_by_id else None,
    }
    if full:
        detail["caseData"] = case.data
        detail["data"] = row.result if row.status == CaseStep.COMPLETED else None
    return detail


def draft_record(row: CaseStep) -> dict[str, Any] | None:
    if row.draft_saved_at is None:
        return None
    return {"data": row.draft, "savedAt": iso(row.draft_saved_at)}
