"""Workflow control beyond tasks: timers and failed activations coming due, messages to `wait`
steps, and sub-cases finishing.

Every write locks the case row, then the step, and does nothing unless the step is still active:
of two beats (or a beat before and after a restart) firing one timer, the second finds it done.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db import transaction

from casemgmt.audit.services import record
from casemgmt.cases.models import Case
from casemgmt.tenancy import rls
from casemgmt.workflows.models import CaseStep
from casemgmt.workflows.services.steps import fail_locked_step, step_fail, step_succeed
from shared.api.errors import InvalidState, NotFound
from shared.api.time import iso, now_ms

if TYPE_CHECKING:
    from datetime import datetime

    from casemgmt.accounts.models import User

# Types whose steps the due-steps sweep finishes (a timer completes; a failed activation fails).
DUE_TYPES = ("timer", "case")
SWEEP_BATCH = 1000


def steps_due_fire(*, now: datetime | None = None) -> int:
    """The due-steps job: completes each active timer whose time has come (`{firedAt}`) and fails
    each step whose activation failed; returns how many it finished. Each in its tenant's context
    and its own transaction, under the case and step row locks: a second run is a no-op."""
    now = now or now_ms()
    due = CaseStep.objects.filter(status=CaseStep.ACTIVE, type__in=DUE_TYPES, fire_at__lte=now).values_list(
        "pk", "tenant_id"
    )
    finished = 0
    for pk, tenant_id in list(due.order_by("fire_at")[:SWEEP_BATCH]):
        with rls.tenant_transaction(tenant_id):
            finished += _fire(pk)
    return finished


def _fire(step_pk: int) -> bool:
    error = CaseStep.objects.filter(pk=step_pk).values_list("error", flat=True).first()
    if error:
        return step_fail(step_pk=step_pk, error=error)
    return step_succeed(step_pk=step_pk, result={"firedAt": iso(now_ms())}, audit="timer:fired")


def _locked_case(*, tenant_id: Any, case_id: Any) -> Case:
    case = (
        Case.objects.select_for_update(of=("self",), no_key=True)
        .select_related("workflow_version")
        .filter(id=case_id, tenant_id=tenant_id)
        .first()
    )
    if case is None:
        raise NotFound("Case not found.")
    return case


@transaction.atomic
def case_message_deliver(*, user: User, case: Case, name: str, data: Any) -> CaseStep:
    """Completes the case's active `wait` step for message `name` (result: `data`, {} when none);
    409 `invalid_state` when no such step is active (not yet reached, already done, a closed case)."""
    case = _locked_case(tenant_id=case.tenant_id, case_id=case.id)
    row = (
        CaseStep.objects.select_for_update(no_key=True)
        .filter(case=case, type="wait", status=CaseStep.ACTIVE, message=name)
        .order_by("position")
        .first()
    )
    if row is None or case.status != Case.ACTIVE:
        raise InvalidState(f"No step of this case is waiting for message {name!r}.")
    result = data if data is not None else {}
    record(
        tenant_id=case.tenant_id,
        actor=str(user.id),
        action="case:message_received",
        resource=f"cases/{case.id}/steps/{row.step_id}",
        changes={"message": name, "data": result},
    )
    step_succeed(step_pk=row.pk, result=result, actor=user)
    row.refresh_from_db()
    return row


def child_case_finished(*, case: Case, event: str, **_: Any) -> None:
    """A case listener: a child case closed completes its parent's `case` step (result `{caseId,
    caseNumber, outcome}`); cancelled, it fails that step as the step's `onFailure` says. Runs in
    the child's closing transaction; a parent step no longer active (rerouted, halted) is left be."""
    if event not in ("case:closed", "case:cancelled"):
        return
    # The workflow's own work: whoever closed the child may not see the parent (access teams).
    with rls.tenant_transaction(case.tenant_id):
        _child_finished(case, event)


def _child_finished(case: Case, event: str) -> None:
    parent_id = (
        CaseStep.objects.filter(child_case=case, status=CaseStep.ACTIVE, type="case")
        .values_list("case_id", flat=True)
        .first()
    )
    if parent_id is None:
        return
    parent = _locked_case(tenant_id=case.tenant_id, case_id=parent_id)
    row = (
        CaseStep.objects.select_for_update(no_key=True)
        .filter(case=parent, child_case=case, status=CaseStep.ACTIVE)
        .first()
    )
    if row is None:
        return
    if event == "case:closed":
        result = {"caseId": str(case.id), "caseNumber": case.case_number, "outcome": case.outcome or None}
        step_succeed(step_pk=row.pk, result=result)
    else:
        fail_locked_step(case=parent, row=row, error=f"child case {case.case_number} was cancelled")
