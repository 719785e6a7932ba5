"""Reads of the workflows app: a case's steps, workflow definitions, and the human-task inbox."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any
from uuid import UUID

from django.db.models import F, Q, QuerySet

from casemgmt.accounts.selectors import team_ids_of
from casemgmt.cases.models import Case
from casemgmt.workflows.models import CaseStep, StepRun, Workflow
from shared.api.errors import NotFound

if TYPE_CHECKING:
    from casemgmt.accounts.models import User


def case_steps(*, case: Case) -> QuerySet[CaseStep]:
    """The steps of a case's workflow, in definition order."""
    return CaseStep.objects.filter(case=case).order_by("position")


def case_relations(*, case: Case) -> tuple[Case | None, list[Case]]:
    """The case's parent (the case whose `case` step created it) and its children, oldest first,
    earlier rework rounds' children included."""
    parent_id = (
        CaseStep.objects.filter(child_case=case).values_list("case_id", flat=True).first()
        or StepRun.objects.filter(child_case=case).values_list("case_id", flat=True).first()
    )
    parent = Case.objects.filter(id=parent_id, tenant_id=case.tenant_id).first() if parent_id else None
    child_ids = (
        CaseStep.objects.filter(case=case, child_case__isnull=False)
        .values("child_case_id")
        .union(StepRun.objects.filter(case=case, child_case__isnull=False).values("child_case_id"))
    )
    children = list(
        Case.objects.filter(
            id__in=[row["child_case_id"] for row in child_ids], tenant_id=case.tenant_id
        ).order_by("created_at", "id")
    )
    return parent, children


def step_results(case: Case) -> dict[str, Any]:
    """`step_results` for templates and conditions: outputs keyed by step id."""
    rows = CaseStep.objects.filter(case=case, status=CaseStep.COMPLETED).values_list("step_id", "result")
    return {step_id: result for step_id, result in rows}


# ---------------------------------------------------------------------------- definitions


def workflow_list(
    *, tenant_id: Any, case_type_key: str | None = None, status: str | None = None
) -> QuerySet[Workflow]:
    workflows = Workflow.objects.filter(tenant_id=tenant_id)
    if case_type_key:
        workflows = workflows.filter(case_type_key=case_type_key)
    if status:
        workflows = workflows.filter(status=status)
    return workflows.order_by("-created_at", "-id")  # newest first; id keeps ties stable


def workflow_get(*, tenant_id: Any, workflow_id: Any) -> Workflow:
    workflow = Workflow.objects.filter(tenant_id=tenant_id, id=workflow_id).first()
    if workflow is None:
        raise NotFound("Workflow not found.")
    return workflow


# ---------------------------------------------------------------------------- tasks

# created_at (the default): newest first. due_date: soonest due first, undated last. case_type: by
# key. Ties: newest first, then by id, so paging is stable.
NEWEST_FIRST = (F("activated_at").desc(nulls_last=True), "-pk")
INBOX_SORTS = {
    "due_date": (F("due_at").asc(nulls_last=True), *NEWEST_FIRST),
    "created_at": NEWEST_FIRST,
    "case_type": ("case__case_type__key", *NEWEST_FIRST),
}
INBOX_STATUSES = ("claimed", "unclaimed", "completed")


# Only an active task step (open) or a completed one (history) is a task: a pending step was
# never activated, and a skipped or failed one (halted case, false condition) is no longer open.
TASK_STATUSES = (CaseStep.ACTIVE, CaseStep.COMPLETED)


def candidate_filter(user: User) -> Q:
    """Open tasks `user` may claim: unassigned, with no role or one it holds, and no candidate
    team or one it is a member of."""
    return (
        Q(status=CaseStep.ACTIVE, assigned_to__isnull=True)
        & (Q(role="") | Q(role__in=user.role_names))
        & (Q(candidate_team__isnull=True) | Q(candidate_team_id__in=team_ids_of(user)))
    )


def _visible_to(user: User) -> Q:
    """Decision: a user sees the open tasks it holds or may claim (`candidate_filter`), and the
    completed tasks it holds or completed."""
    open_held = Q(status=CaseStep.ACTIVE, assigned_to=user)
    done = Q(status=CaseStep.COMPLETED) & (Q(assigned_to=user) | Q(completed_by=user))
    return open_held | candidate_filter(user) | done


def task_inbox(
    *,
    user: User,
    status: str | None = None,
    due_before: datetime | None = None,
    due_after: datetime | None = None,
    case_id: UUID | None = None,
    sort_by: str = "created_at",
    case_type: str | None = None,
    team: UUID | None = None,
    candidate: str | None = None,
) -> QuerySet[CaseStep]:
    """The tasks `user` sees: open ones unless `status` (one of `INBOX_STATUSES`) says otherwise,
    due strictly between `due_after` and `due_before`; `sort_by` is a key of `INBOX_SORTS`. The
    console also narrows by case type key. `team` keeps the tasks whose candidate team it is;
    `candidate="me"` the open tasks the caller may claim."""
    tasks = CaseStep.objects.filter(tenant_id=user.member_tenant_id, is_task=True, status__in=TASK_STATUSES)
    if case_type:
        tasks = tasks.filter(case__case_type__key=case_type)
    tasks = tasks.filter(_visible_to(user))
    if status == "claimed":
        tasks = tasks.filter(status=CaseStep.ACTIVE, assigned_to__isnull=False)
    elif status == "unclaimed":
        tasks = tasks.filter(status=CaseStep.ACTIVE, assigned_to__isnull=True)
    elif status == "completed":
        tasks = tasks.filter(status=CaseStep.COMPLETED)
    else:
        tasks = tasks.filter(status=CaseStep.ACTIVE)  # decision: the inbox shows open tasks by default
    if due_before:
        tasks = tasks.filter(due_at__lt=due_before)
    if due_after:
        tasks = tasks.filter(due_at__gt=due_after)
    if case_id:
        tasks = tasks.filter(case_id=case_id)
    if team:
        tasks = tasks.filter(candidate_team_id=team)
    if candidate == "me":
        tasks = tasks.filter(candidate_filter(user))
    return tasks.select_related("case__case_type", "case__workflow_version", "candidate_team").order_by(
        *INBOX_SORTS[sort_by]
    )


def task_get(*, user: User, case_id: Any, step_id: str) -> CaseStep:
    row = (
        CaseStep.objects.select_related("case__case_type", "case__workflow_version", "candidate_team")
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
