"""Human tasks: an active `task` step (or an agent step escalated to a human).

Every write locks the case row first (the same lock the cases app and the engine take), then the
step: claims, completions and activations of one case are serialized, so of two concurrent
claimers exactly one wins and a diamond's join sees both branches.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction

from casemgmt.accounts.models import Team, User
from casemgmt.audit.services import record
from casemgmt.cases.jsondata import UNUSABLE_SCHEMA_ERRORS, draft7_validator, unusable_reason
from casemgmt.cases.models import Case
from casemgmt.realtime.events import broadcast_on_commit
from casemgmt.tenancy import rls
from casemgmt.workflows.definitions import step_definition
from casemgmt.workflows.engine import workflow_advance, workflow_reroute
from casemgmt.workflows.models import CaseStep
from casemgmt.workflows.services import assignment
from casemgmt.workflows.task_events import ASSIGNED, ESCALATED, SLA_BREACHED, task_notify
from shared.api.errors import Conflict, NotFound, PermissionDenied, ValidationFailed
from shared.api.time import now_ms
from shared.auth.permissions import has_permission

SLA_REASON = "SLA breached: task overdue"


def task_audit(row: CaseStep, actor: str, action: str, changes: dict[str, Any]) -> None:
    """Appends a task event (resource `cases/<case>/tasks/<step>`) in the caller's transaction."""
    record(
        tenant_id=row.tenant_id,
        actor=actor,
        action=action,
        resource=f"cases/{row.case_id}/tasks/{row.step_id}",
        changes=changes,
    )


def _announce_assignment(row: CaseStep) -> None:
    """`task:assigned` whenever the assignee changes to a user; sent to that user only."""
    if row.assigned_to_id is None:
        return
    broadcast_on_commit(
        tenant_id=row.tenant_id,
        type="task:assigned",
        data={"caseId": str(row.case_id), "stepId": row.step_id, "assignedTo": str(row.assigned_to_id)},
        only_user=str(row.assigned_to_id),
    )


def tenant_user(*, tenant_id: Any, user_id: Any, field: str) -> User:
    """An active user of the tenant, else 400 (e.g. a reassign target). A bulk action resolves its
    target once and passes the user itself."""
    if isinstance(user_id, User) and user_id.tenant_id == tenant_id and user_id.is_active:
        return user_id
    user = User.objects.filter(tenant_id=tenant_id, id=user_id, is_active=True).first() if user_id else None
    if user is None:
        raise ValidationFailed(f"{field} must be an active user of this tenant", field=field)
    return user


def task_open(
    *,
    row: CaseStep,
    due_at: datetime | None,
    assign_to: Any,
    actor: str,
    team: Team | None = None,
    strategy: str | None = None,
    case_type_key: str = "",
) -> None:
    """Called by the engine when a task step activates: SLA, candidate team and the initial
    assignee (the step's `assignTo`, else its team's `assignment` strategy), delegated while
    that user is out of office."""
    stored = (row.is_task, row.due_at, row.assigned_to_id, row.candidate_team_id)
    row.is_task, row.due_at, row.candidate_team = True, due_at, team
    picked_by = None
    assignee = (
        User.objects.filter(tenant_id=row.tenant_id, id=assign_to, is_active=True).first()
        if assign_to
        else None
    )
    if assignee is None and team is not None and strategy in assignment.STRATEGIES:
        assignee = assignment.strategy_pick(
            row=row, team=team, strategy=strategy, case_type_key=case_type_key
        )
        picked_by = strategy if assignee is not None else None
    if assignee is not None:
        assignee = assignment.with_delegation(row, assignee, actor=actor, audit=task_audit)
    if assignee is not None:
        row.assigned_to = assignee
    if (row.is_task, row.due_at, row.assigned_to_id, row.candidate_team_id) != stored:
        row.save(update_fields=["is_task", "due_at", "assigned_to", "candidate_team"])
    if assignee is not None:
        changes: dict[str, Any] = {"assignedTo": str(assignee.id)}
        if picked_by:
            changes["strategy"] = picked_by
        task_audit(row, actor, "task:assigned", changes)
        _announce_assignment(row)
        task_notify(row=row, event=ASSIGNED, recipient=assignee, actor=actor)


def locked_task(*, user: User, case_id: Any, step_id: str) -> tuple[Case, CaseStep]:
    case = (
        Case.objects.select_for_update(of=("self",), no_key=True)
        .filter(id=case_id, tenant_id=user.member_tenant_id)
        .first()
    )
    row = (
        CaseStep.objects.select_for_update(no_key=True)
        .filter(case=case, step_id=step_id, is_task=True)
        .first()
        if case
        else None
    )
    if case is None or row is None:
        raise NotFound("Task not found.")
    return case, row


def _require_role(row: CaseStep, target: User, field: str) -> None:
    """A task restricted to a role or a team can only be handed to a user who could claim it."""
    problem = assignment.hold_problem(row, target)
    if problem:
        raise ValidationFailed(f"{field} {problem}", field=field)


def _require_open(row: CaseStep) -> None:
    if row.status == CaseStep.COMPLETED:
        raise Conflict("Task is already completed.", code="already_completed")
    if row.status != CaseStep.ACTIVE:
        raise Conflict(f"Task is not open (step is {row.status}).", code="invalid_state")


def _require_not_held_by_other(row: CaseStep, user: User) -> None:
    if row.assigned_to_id is not None and row.assigned_to_id != user.id:
        raise Conflict("Task is claimed by another user.", code="already_claimed")


@transaction.atomic
def task_claim(*, user: User, case_id: Any, step_id: str) -> CaseStep:
    case, row = locked_task(user=user, case_id=case_id, step_id=step_id)
    _require_open(row)
    _require_not_held_by_other(row, user)  # 409 when claimed by another user
    if row.role and row.role not in user.role_names:
        raise PermissionDenied(f"Only holders of role {row.role!r} may claim this task.")
    if row.candidate_team_id and not assignment.is_member(row.candidate_team_id, user):
        raise PermissionDenied("Only members of the task's team may claim it.")
    if row.assigned_to_id == user.id:
        return row  # claiming a task one already holds is an idempotent 200
    row.assigned_to, row.claimed_at = user, now_ms()
    row.save(update_fields=["assigned_to", "claimed_at"])
    task_audit(row, str(user.id), "task:claimed", {"assignedTo": str(user.id)})
    _announce_assignment(row)
    return row


def form_errors(schema: dict[str, Any], data: Any) -> list[dict[str, str]]:
    # The cases app's validator: no remote $ref is ever fetched (SSRF), and a formSchema that cannot be
    # applied (unresolvable $ref, bad pattern, $ref loop) is a 400 rather than a 500.
    try:
        errors = sorted(
            draft7_validator(schema, formats=False).iter_errors(data), key=lambda e: list(e.absolute_path)
        )
    except UNUSABLE_SCHEMA_ERRORS as exc:
        raise ValidationFailed(
            f"the task's formSchema cannot be applied: {unusable_reason(exc)}", field="formSchema"
        ) from exc
    return [
        {"field": ".".join(["data", *(str(p) for p in error.absolute_path)]), "error": error.message}
        for error in errors
    ]


def _check_completion(step: dict[str, Any], data: Any, outcome: str | None) -> None:
    errors = form_errors(step.get("formSchema") or {"type": "object"}, data)
    outcomes = step.get("outcomes")
    if outcomes and outcome not in outcomes:
        errors.append({"field": "outcome", "error": f"must be one of: {', '.join(outcomes)}"})
    if errors:
        raise ValidationFailed.from_errors(errors)


@transaction.atomic
def task_complete(
    *, user: User, case_id: Any, step_id: str, data: dict[str, Any], outcome: str | None
) -> CaseStep:
    case, row = locked_task(user=user, case_id=case_id, step_id=step_id)
    _require_open(row)
    _require_not_held_by_other(row, user)
    if row.assigned_to_id is None and assignment.hold_problem(row, user):
        raise PermissionDenied("Only a user who may claim this task may complete it unclaimed.")
    step = step_definition(case, row.step_id)
    _check_completion(step, data, outcome)
    now = now_ms()
    if row.assigned_to_id is None:  # completing an unclaimed task makes the caller its assignee
        row.assigned_to, row.claimed_at = user, now
    row.status, row.completed_at, row.completed_by = CaseStep.COMPLETED, now, user
    row.result, row.outcome = data, outcome or ""
    row.draft, row.draft_saved_at = None, None  # the completed data supersedes any draft
    row.save(
        update_fields=[
            "assigned_to",
            "claimed_at",
            "status",
            "completed_at",
            "completed_by",
            "result",
            "outcome",
            "draft",
            "draft_saved_at",
        ]
    )
    task_audit(row, str(user.id), "task:completed", {"outcome": outcome, "data": data})
    route = (step.get("routes") or {}).get(outcome) if outcome else None
    if route:  # rework: back to an earlier step, this completion kept in the history
        # The answer shows this completion (the row itself is pending again, for the next round).
        workflow_reroute(case=case, from_step=row.step_id, outcome=outcome or "", to_step=route, actor=user)
    else:
        workflow_advance(case=case, actor=user)  # completion activates the next steps
    return row


@transaction.atomic
def task_save_draft(*, user: User, case_id: Any, step_id: str, data: dict[str, Any]) -> CaseStep:
    _, row = locked_task(user=user, case_id=case_id, step_id=step_id)
    _require_open(row)
    _require_not_held_by_other(row, user)
    row.draft, row.draft_saved_at = data, now_ms()
    row.save(update_fields=["draft", "draft_saved_at"])
    return row


@transaction.atomic
def task_reassign(*, user: User, case_id: Any, step_id: str, assign_to: Any) -> CaseStep:
    _, row = locked_task(user=user, case_id=case_id, step_id=step_id)
    target = tenant_user(tenant_id=user.member_tenant_id, user_id=assign_to, field="assignTo")
    _require_open(row)
    _require_role(row, target, "assignTo")
    # While the target is out of office the task goes to their delegate, or back to unassigned.
    assignee = assignment.with_delegation(row, target, actor=str(user.id), audit=task_audit)
    before = row.assigned_to_id
    row.assigned_to, row.claimed_at = assignee, now_ms() if assignee else None
    row.save(update_fields=["assigned_to", "claimed_at"])
    task_audit(
        row,
        str(user.id),
        "task:reassigned",
        {"assignedTo": {"before": _str(before), "after": _str(assignee and assignee.id)}},
    )
    _announce_assignment(row)
    task_notify(row=row, event=ASSIGNED, recipient=assignee, actor=str(user.id))
    return row


@transaction.atomic
def task_release(*, user: User, case_id: Any, step_id: str) -> CaseStep:
    """The holder (or a `tasks:assign` holder) gives the task back to its candidates."""
    _, row = locked_task(user=user, case_id=case_id, step_id=step_id)
    _require_open(row)
    if row.assigned_to_id is None:
        raise Conflict("Task is not held by anyone.", code="invalid_state")
    if row.assigned_to_id != user.id and not has_permission(user.get_permission_strings(), "tasks:assign"):
        raise PermissionDenied("Only the holder of the task, or tasks:assign, may release it.")
    before = row.assigned_to_id
    row.assigned_to, row.claimed_at = None, None
    row.save(update_fields=["assigned_to", "claimed_at"])
    task_audit(row, str(user.id), "task:released", {"assignedTo": {"before": str(before), "after": None}})
    broadcast_on_commit(
        tenant_id=row.tenant_id,
        type="task:released",
        data={"caseId": str(row.case_id), "stepId": row.step_id},
        permission="tasks:read",
    )
    return row


def _str(value: Any) -> str | None:
    return str(value) if value is not None else None


def _mark_escalated(row: CaseStep, *, actor: str, reason: str, target: User | None) -> bool:
    """Sets the escalation once (conditional UPDATE ... WHERE escalated = false): a second run, or
    a concurrent one on another worker, finds nothing to update."""
    now = now_ms()
    updates: dict[str, Any] = {"escalated": True, "escalated_at": now, "escalation_reason": reason}
    if target is not None:
        updates.update(escalated_to=target, assigned_to=target, claimed_at=now)
    if not CaseStep.objects.filter(pk=row.pk, escalated=False, status=CaseStep.ACTIVE).update(**updates):
        return False
    row.refresh_from_db()
    changes = {"reason": reason, "escalatedTo": _str(row.escalated_to_id)}
    task_audit(row, actor, "task:escalated", changes)
    broadcast_on_commit(
        tenant_id=row.tenant_id,
        type="task:escalated",
        data={"caseId": str(row.case_id), "stepId": row.step_id, **changes},
        permission="tasks:read",
    )
    if target is not None:
        _announce_assignment(row)
        task_notify(row=row, event=ESCALATED, recipient=target, actor=actor)
    return True


@transaction.atomic
def task_escalate(
    *, user: User, case_id: Any, step_id: str, reason: str, escalate_to: Any = None
) -> CaseStep:
    _, row = locked_task(user=user, case_id=case_id, step_id=step_id)
    target = (
        tenant_user(tenant_id=user.member_tenant_id, user_id=escalate_to, field="escalateTo")
        if escalate_to
        else None
    )
    _require_open(row)
    if target is not None:
        _require_role(row, target, "escalateTo")
    if row.escalated:
        raise Conflict("Task is already escalated.", code="invalid_state")
    _mark_escalated(row, actor=str(user.id), reason=reason, target=target)
    row.refresh_from_db()
    return row


def tasks_escalate_overdue(*, now: datetime | None = None) -> int:
    """The SLA job: escalates each overdue open task once; returns how many it escalated."""
    now = now or now_ms()
    overdue = CaseStep.objects.filter(
        is_task=True, status=CaseStep.ACTIVE, escalated=False, due_at__lt=now
    ).values_list("pk", "tenant_id")
    escalated = 0
    for pk, tenant_id in list(overdue[:1000]):  # selected across tenants, each escalated in its own
        with rls.tenant_transaction(tenant_id):
            row = CaseStep.objects.select_related("assigned_to").get(pk=pk)
            if _mark_escalated(row, actor="system", reason=SLA_REASON, target=None):
                escalated += 1
                # The person holding the task hears that it passed its due time.
                task_notify(row=row, event=SLA_BREACHED, recipient=row.assigned_to, actor="system")
    return escalated


@transaction.atomic
def tasks_release_for_user(*, user: User, actor: User | str | None) -> int:
    """Disabling a principal: each open task it holds goes to the step's `reassignTo` user when
    that user is active (and not the disabled one), else back to unclaimed. Returns the count."""
    actor_str = str(getattr(actor, "id", None) or actor or "system")
    count = 0
    for row in CaseStep.objects.select_for_update(no_key=True).filter(
        assigned_to=user, is_task=True, status=CaseStep.ACTIVE
    ):
        target_id = step_definition(row.case, row.step_id).get("reassignTo")
        target = (
            User.objects.filter(tenant_id=row.tenant_id, id=target_id, is_active=True)
            .exclude(id=user.id)
            .first()
            if target_id
            else None
        )
        row.assigned_to, row.claimed_at = target, now_ms() if target else None
        row.save(update_fields=["assigned_to", "claimed_at"])
        task_audit(
            row,
            actor_str,
            "task:reassigned",
            {
                "assignedTo": {"before": str(user.id), "after": _str(target and target.id)},
                "reason": "assignee disabled",
            },
        )
        _announce_assignment(row)
        task_notify(row=row, event=ASSIGNED, recipient=target, actor=actor_str)
        count += 1
    return count
