"""The workflows app's side of a case, registered with the cases app (below it) at start-up: which
published workflow a new case binds, starting and halting it, and the reads of a case's steps that
the case lists and detail show. The case services and selectors call these through
`casemgmt.cases.hooks`, in their own transaction, as direct calls would."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any
from uuid import UUID

from django.db.models import QuerySet

from casemgmt.cases.hooks import CreateRead, WorkflowBinding
from casemgmt.cases.models import Case
from casemgmt.workflows.engine import workflow_halt, workflow_start
from casemgmt.workflows.models import CaseStep, StepRun, Workflow
from shared.api.errors import ValidationFailed
from shared.api.time import iso

if TYPE_CHECKING:
    from casemgmt.cases.models import CaseType


def resolve_workflow(*, tenant_id: Any, case_type: CaseType, workflow_version_id: Any) -> Workflow | None:
    """An explicit version must be a published workflow of this case type; otherwise the case type's
    default published workflow, or none."""
    workflows = Workflow.objects.filter(
        tenant_id=tenant_id, case_type_key=case_type.key, status=Workflow.PUBLISHED
    )
    if workflow_version_id is None:
        return workflows.filter(is_default=True).first()
    workflow = workflows.filter(id=workflow_version_id).first()
    if workflow is None:
        raise _not_published()
    return workflow


def _not_published() -> ValidationFailed:
    return ValidationFailed(
        "workflowVersionId is not a published workflow version of this case type",
        field="workflowVersionId",
    )


@lru_cache(maxsize=1024)
def _published_workflow(workflow_id: UUID) -> Workflow:
    """A published version's definition, SLA and autoClose never change (editing one makes a new
    draft), so a process may keep it; whether it is still published and the default is read on every
    create. Only those frozen fields are read from the kept row."""
    return Workflow.objects.get(pk=workflow_id)


def _decode(workflow_id: Any, workflow_version_id: Any) -> Workflow | None:
    if workflow_id is None and workflow_version_id is not None:
        raise _not_published()  # the rollback gives the case number back
    return _published_workflow(workflow_id) if workflow_id else None


# The id of the workflow a new case binds: the one asked for if published for this case type, else
# the case type's default published one.
BOUND_WORKFLOW_SQL = f"""(SELECT w.id FROM {Workflow._meta.db_table} w
    WHERE w.tenant_id = %(tenant)s AND w.case_type_key = %(key)s AND w.status = '{Workflow.PUBLISHED}'
      AND CASE WHEN %(workflow)s::uuid IS NULL THEN w.is_default ELSE w.id = %(workflow)s::uuid END)"""  # noqa: S608 - the model table name and a status constant; values are placeholders


def _read(tenant_id: UUID, case_type: CaseType, workflow_version_id: Any) -> Workflow | None:
    return resolve_workflow(tenant_id=tenant_id, case_type=case_type, workflow_version_id=workflow_version_id)


def current_steps(case_ids: list[Any]) -> dict[Any, str]:
    """`currentStep` for a page of list items in one query: the name of each case's first
    active step by position."""
    names: dict[Any, str] = {}
    rows = (
        CaseStep.objects.filter(case_id__in=case_ids, status=CaseStep.ACTIVE)
        .order_by("case_id", "position")
        .values_list("case_id", "name")
    )
    for case_id, name in rows:
        names.setdefault(case_id, name)
    return names


def steps_of(case: Case) -> list[tuple[Any, ...]]:
    steps = CaseStep.objects.filter(case=case).order_by("position")
    return [
        (
            s.step_id,
            s.name,
            s.type,
            s.status,
            iso(s.activated_at),
            iso(s.completed_at),
            s.iteration,
            iso(s.fire_at),
            s.message,
            str(s.child_case_id) if s.child_case_id else None,
            s.result,
            s.outcome,
            str(s.completed_by_id) if s.completed_by_id else None,
            s.error,
        )
        for s in steps
    ]


def family_of(case_id: Any) -> dict[str, Any]:
    """A case's place among sub-cases (`parentId`, `children` in creation order) and its steps'
    earlier runs (rework history, oldest first)."""
    parent_id = (
        CaseStep.objects.filter(child_case_id=case_id).values_list("case_id", flat=True).first()
        or StepRun.objects.filter(child_case_id=case_id).values_list("case_id", flat=True).first()
    )
    child_ids = set(
        CaseStep.objects.filter(case_id=case_id, child_case__isnull=False).values_list(
            "child_case_id", flat=True
        )
    ) | set(
        StepRun.objects.filter(case_id=case_id, child_case__isnull=False).values_list(
            "child_case_id", flat=True
        )
    )
    children = (
        Case.objects.filter(id__in=child_ids)
        .order_by("created_at", "id")
        .values("id", "case_number", "status")
        if child_ids
        else []
    )
    runs = StepRun.objects.filter(case_id=case_id).order_by("id")
    return {
        "parentId": str(parent_id) if parent_id else None,
        "children": [
            {"id": str(c["id"]), "caseNumber": c["case_number"], "status": c["status"]} for c in children
        ],
        "history": [
            {
                "stepId": run.step_id,
                "type": run.type,
                "iteration": run.iteration,
                "status": run.status,
                "result": run.result,
                "outcome": run.outcome or None,
                "completedBy": str(run.completed_by_id) if run.completed_by_id else None,
                "activatedAt": iso(run.activated_at),
                "completedAt": iso(run.completed_at),
            }
            for run in runs
        ],
    }


def assigned_case_ids(tenant_id: Any, user_id: Any) -> QuerySet[CaseStep, Any]:
    # Decision: "assigned to" means holding an active human task of the case.
    return CaseStep.objects.filter(
        tenant_id=tenant_id, type="task", status=CaseStep.ACTIVE, assigned_to_id=user_id
    ).values("case_id")


BINDING = WorkflowBinding(
    create_read=CreateRead(name="workflow", sql=BOUND_WORKFLOW_SQL, read=_read, decode=_decode),
    resolve=resolve_workflow,
    start=workflow_start,
    halt=workflow_halt,
    current_steps=current_steps,
    steps_of=steps_of,
    assigned_case_ids=assigned_case_ids,
    step_active=CaseStep.ACTIVE,
    family_of=family_of,
)
