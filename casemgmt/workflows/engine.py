"""Workflow engine: creates a case's steps, activates them as their dependencies finish, halts.

Every function here runs inside the caller's transaction with the case row locked (or, in
`workflow_start`, not yet visible to anyone else), so two completions of a diamond's branches
cannot both miss each other: activation happens in the same transaction as its cause.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from casemgmt.audit.services import record
from casemgmt.cases.models import Case
from casemgmt.realtime.events import broadcast_on_commit
from casemgmt.templating import TemplateError, condition_holds
from casemgmt.workflows import steps as step_types
from casemgmt.workflows.definitions import step_definition, steps_of
from casemgmt.workflows.models import CaseStep, StepRun
from casemgmt.workflows.selectors import step_results
from shared.api.time import iso, now_ms

if TYPE_CHECKING:
    from casemgmt.accounts.models import User

logger = logging.getLogger(__name__)
DONE = (CaseStep.COMPLETED, CaseStep.SKIPPED)


def actor_id(actor: User | str | None) -> str:
    """The audit actor: a user's id, an id or "system" as given, or "system" for None."""
    return str(getattr(actor, "id", None) or actor or "system")


def workflow_start(*, case: Case, actor: User | str | None) -> None:
    """Creates the case's steps from its bound workflow version and activates the first ones.

    The first steps are entered before the rows are written, so they are inserted in their entered
    state (one INSERT, no UPDATE per step); their activation runs once they are stored."""
    workflow = case.workflow_version
    if workflow is None:
        return
    step_types.load()
    definitions = steps_of(workflow.definition)
    rows = [
        CaseStep(
            tenant_id=case.tenant_id,
            case=case,
            step_id=step["id"],
            name=step.get("name") or step["id"],
            type=step["type"],
            position=position,
            is_task=step["type"] == "task",
            role=step.get("role") or "",
        )
        for position, step in enumerate(definitions)
    ]
    entered = list(_advance(rows=rows, definitions={step["id"]: step for step in definitions}, case=case))
    CaseStep.objects.bulk_create(rows)
    for row, step, _ in entered:
        if row.status == CaseStep.ACTIVE:
            _activate(row=row, step=step, case=case, actor=actor_id(actor))
    _maybe_auto_close(case=case, auto_close=workflow.auto_close, rows=rows, actor=actor_id(actor))


def workflow_halt(*, case: Case, actor: User | str | None) -> None:
    """Closing or cancelling a case halts its workflow: no further activation, open tasks closed.
    Decision: pending and active steps become `skipped` with the reason in `error`. A step type
    with outside work under way (a `dag` step's run) stops it through its `halt`."""
    step_types.load()
    active_types = set(
        CaseStep.objects.filter(case=case, status=CaseStep.ACTIVE).values_list("type", flat=True)
    )
    for type_name in sorted(active_types):
        halt = getattr(step_types.REGISTRY.get(type_name), "halt", None)
        if halt is not None:
            halt(case=case)
    CaseStep.objects.filter(case=case, status__in=(CaseStep.PENDING, CaseStep.ACTIVE)).update(
        status=CaseStep.SKIPPED, error=f"halted: case {case.status}"
    )


def template_context(case: Case) -> dict[str, Any]:
    return {
        "case_data": case.data,
        "step_results": step_results(case),
        "case_number": case.case_number,
        "now": iso(now_ms()),
    }


def workflow_advance(*, case: Case, actor: User | str | None) -> None:
    """Activates every pending step whose dependencies are all completed or skipped; a false
    condition skips the step instead, and its dependents are evaluated in turn."""
    if case.status != Case.ACTIVE:
        return
    workflow = case.workflow_version
    if workflow is None:
        return
    step_types.load()
    definitions = {step["id"]: step for step in steps_of(workflow.definition)}
    rows = list(CaseStep.objects.filter(case=case).order_by("position"))
    for row, step, changed in _advance(rows=rows, definitions=definitions, case=case):
        row.save(update_fields=changed)
        if row.status == CaseStep.ACTIVE:
            _activate(row=row, step=step, case=case, actor=actor_id(actor))
    _maybe_auto_close(case=case, auto_close=workflow.auto_close, rows=rows, actor=actor_id(actor))


# What a step's run leaves on its row; a rework route resets them to a pending step's values.
_RUN_FIELDS = {
    "status": CaseStep.PENDING,
    "activated_at": None,
    "completed_at": None,
    "result": None,
    "error": "",
    "attempts": 0,
    "attempt_deadline": None,
    "fire_at": None,
    "message": "",
    "child_case": None,
    "assigned_to": None,
    "claimed_at": None,
    "due_at": None,
    "outcome": "",
    "completed_by": None,
    "draft": None,
    "draft_saved_at": None,
    "escalated": False,
    "escalated_at": None,
    "escalation_reason": "",
    "escalated_to": None,
    "candidate_team": None,
}


def workflow_reroute(
    *, case: Case, from_step: str, outcome: str, to_step: str, actor: User | str | None
) -> None:
    """A rework route: `to_step` (before `from_step`) and every step after it go back to `pending`,
    each run that had started kept as a `StepRun` (the workflow's history), and the engine enters
    `to_step` again with its next iteration (a new task for a `task` step). An active step among
    them (a parallel branch) stops with the rest: its run is archived as it stood."""
    rows = list(CaseStep.objects.filter(case=case).order_by("position"))
    start = next(row.position for row in rows if row.step_id == to_step)
    now = now_ms()
    redone = [row for row in rows if row.position >= start and row.status != CaseStep.PENDING]
    StepRun.objects.bulk_create([archived_run(row, now) for row in redone])
    for row in redone:
        for field, value in _RUN_FIELDS.items():
            setattr(row, field, value)
        row.is_task = row.type == "task"
        row.role = (step_definition(case, row.step_id).get("role") or "") if row.is_task else ""
        row.iteration += 1
        row.save(update_fields=[*_RUN_FIELDS, "is_task", "role", "iteration"])
    record(
        tenant_id=case.tenant_id,
        actor=actor_id(actor),
        action="workflow:rerouted",
        resource=f"cases/{case.id}",
        changes={"fromStep": from_step, "outcome": outcome, "toStep": to_step, "resetSteps": len(redone)},
    )
    broadcast_on_commit(
        tenant_id=case.tenant_id,
        type="workflow:rerouted",
        data={"caseId": str(case.id), "fromStep": from_step, "toStep": to_step},
        permission="cases:read",
    )
    workflow_advance(case=case, actor=actor)


def archived_run(row: CaseStep, now: Any) -> StepRun:
    return StepRun(
        tenant_id=row.tenant_id,
        case_id=row.case_id,
        step_id=row.step_id,
        type=row.type,
        iteration=row.iteration,
        status=row.status,
        activated_at=row.activated_at,
        completed_at=row.completed_at,
        result=row.result,
        outcome=row.outcome,
        error=row.error,
        completed_by_id=row.completed_by_id,
        child_case_id=row.child_case_id,
        archived_at=now,
    )


def _advance(
    *, rows: list[CaseStep], definitions: dict[str, dict[str, Any]], case: Case
) -> Iterator[tuple[CaseStep, dict[str, Any], list[str]]]:
    """Enters, in position order and until nothing changes, every pending step whose dependencies
    are done; yields each entered row (changed in memory only), its definition and the fields set."""
    by_id = {row.step_id: row for row in rows}
    progressed = True
    while progressed:
        progressed = False
        for row in rows:
            step = definitions.get(row.step_id)
            if row.status != CaseStep.PENDING or step is None:
                continue
            if all(by_id[dep].status in DONE for dep in step["dependsOn"] if dep in by_id):
                yield row, step, _enter(row=row, step=step, case=case)
                progressed = True


def _enter(*, row: CaseStep, step: dict[str, Any], case: Case) -> list[str]:
    """The step becomes active, or skipped (false condition), or failed (a condition that fails to
    render); returns the fields changed. The caller stores the row, then activates an active one."""
    now = now_ms()
    condition = step.get("condition")
    if condition:
        try:
            holds = condition_holds(condition, template_context(case))
        except TemplateError as exc:
            row.status, row.error, row.completed_at = CaseStep.FAILED, f"condition failed: {exc}", now
            return ["status", "error", "completed_at"]
        if not holds:
            row.status, row.completed_at = CaseStep.SKIPPED, now
            return ["status", "completed_at"]
    row.status, row.activated_at = CaseStep.ACTIVE, now
    return ["status", "activated_at"]


def _activate(*, row: CaseStep, step: dict[str, Any], case: Case, actor: str) -> None:
    """The stored, now active step's type starts its work (inside this transaction)."""
    step_types.REGISTRY[row.type].activate(row=row, step=step, case=case, actor=actor)
    broadcast_on_commit(
        tenant_id=case.tenant_id,
        type="step:activated",
        data={"caseId": str(case.id), "stepId": row.step_id},
        permission="cases:read",
    )


def _maybe_auto_close(*, case: Case, auto_close: bool, rows: list[CaseStep], actor: str) -> None:
    """A case whose last step completes stays active unless the workflow sets autoClose."""
    if not auto_close or not rows or any(row.status not in DONE for row in rows):
        return
    closed_at = now_ms()
    if not Case.objects.filter(pk=case.pk, status=Case.ACTIVE).update(
        status=Case.CLOSED, closed_at=closed_at
    ):
        return
    case.status, case.closed_at = Case.CLOSED, closed_at
    record(
        tenant_id=case.tenant_id,
        actor=actor,
        action="case:closed",
        resource=f"cases/{case.id}",
        changes={
            "status": {"before": Case.ACTIVE, "after": Case.CLOSED},
            "reason": "workflow completed (autoClose)",
        },
    )
    broadcast_on_commit(
        tenant_id=case.tenant_id,
        type="case:updated",
        data={"caseId": str(case.id), "version": case.version, "changedBy": actor, "status": Case.CLOSED},
        permission="cases:read",
    )
