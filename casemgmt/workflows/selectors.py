"""Reads of the workflows app: a case's steps, workflow definitions, and the human-task inbox."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from django.db.models import F, Q, QuerySet

from casemgmt.workflows.models import CaseStep, Workflow
from shared.api.errors import NotFound, ValidationFailed
from shared.api.time import parse_iso

if TYPE_CHECKING:
    from casemgmt.accounts.models import User
    from casemgmt.cases.models import Case


def case_steps(*, case: Case) -> QuerySet[CaseStep]:
    """The steps of a case's workflow, in definition order."""
    return CaseStep.objects.filter(case=case).order_by("position")


def step_results(case: Case) -> dict[str, Any]:
    """`step_results` for templates and conditions: outputs keyed by step id."""
    rows = CaseStep.objects.filter(case=case, status=CaseStep.COMPLETED).values_list("step_id", "result")
    return {step_id: result for step_id, result in rows}


# ---------------------------------------------------------------------------- definitions


def workflow_list(*, tenant_id: Any, params: Any) -> QuerySet[Workflow]:
    workflows = Workflow.objects.filter(tenant_id=tenant_id)
    if params.get("caseTypeKey"):
        workflows = workflows.filter(case_type_key=params["caseTypeKey"])
    if params.get("status"):
        if params["status"] not in (Workflow.DRAFT, Workflow.PUBLISHED, Workflow.WITHDRAWN):
            raise ValidationFailed("status must be draft, published or withdrawn", field="status")
        workflows = workflows.filter(status=params["status"])
    return workflows.order_by("-created_at", "-id")  # newest first; id keeps ties stable


def workflow_get(*, tenant_id: Any, workflow_id: Any) -> Workflow:
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


def _visible_to(user: User) -> Q:
    """Decision: a user sees the open tasks it holds or may claim (no role, or a role it holds),
    and the completed tasks it holds or completed."""
    open_claimable = Q(status=CaseStep.ACTIVE) & (
        Q(assigned_to=user) | Q(assigned_to__isnull=True) & (Q(role="") | Q(role__in=user.role_names))
    )
    done = Q(status=CaseStep.COMPLETED) & (Q(assigned_to=user) | Q(completed_by=user))
    return open_claimable | done


def task_inbox(*, user: User, params: Any, case_type: str | None = None) -> QuerySet[CaseStep]:
    """The API's inbox filters from `params`; the console also narrows by case type key."""
    tasks = CaseStep.objects.filter(tenant_id=user.member_tenant_id, is_task=True, status__in=TASK_STATUSES)
    if case_type:
        tasks = tasks.filter(case__case_type__key=case_type)
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


def task_get(*, user: User, case_id: Any, step_id: str) -> CaseStep:
    row = (
        CaseStep.objects.select_related("case__case_type", "case__workflow_version")
        .filter(
            tenant_id=user.member_tenant_id,
            case_id=case_id,
            step_id=step_id,
            is_task=True,
            status__in=TASK_STATUSES,
        )
        .first()
    )
    if row is None:
        raise NotFound("Task not found.")
    return row
