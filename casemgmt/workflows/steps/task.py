"""`task` steps: human tasks (form, optional role, assignee, SLA and outcomes)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from casemgmt.accounts.models import Role
from casemgmt.accounts.selectors import team_resolve
from casemgmt.workflows.definitions import check_json_schema, sla_hours_error
from casemgmt.workflows.services.assignment import STRATEGIES
from casemgmt.workflows.services.inbox import task_open
from casemgmt.workflows.steps import register

if TYPE_CHECKING:
    from casemgmt.cases.models import Case
    from casemgmt.workflows.models import CaseStep


def _is_uuid(value: Any) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


class TaskStep:
    type = "task"

    def check(self, step: dict[str, Any], *, field: str, tenant_id: Any) -> list[dict[str, str]]:
        errors: list[dict[str, str]] = []
        if "formSchema" in step:
            errors += check_json_schema(step["formSchema"], f"{field}.formSchema")
        role = step.get("role")
        if role is not None and not (isinstance(role, str) and role):
            errors.append({"field": f"{field}.role", "error": "must be a role name"})
        elif role is not None and not Role.objects.filter(tenant_id=tenant_id, name=role).exists():
            # Only holders of the named role may claim the task: a name no role has (a display name,
            # a typo, another tenant's role) would make a task nobody can ever claim.
            errors.append({"field": f"{field}.role", "error": f"no role named {role!r} in this tenant"})
        for key in ("assignTo", "reassignTo"):
            if step.get(key) is not None and not _is_uuid(step[key]):
                errors.append({"field": f"{field}.{key}", "error": "must be a user id (uuid)"})
        errors += _team_errors(step, field=field, tenant_id=tenant_id)
        sla = step.get("slaHours")
        if sla is not None and (problem := sla_hours_error(sla)):
            errors.append({"field": f"{field}.slaHours", "error": problem})
        outcomes = step.get("outcomes")
        if outcomes is not None and not (
            isinstance(outcomes, list) and outcomes and all(isinstance(o, str) and o for o in outcomes)
        ):
            errors.append({"field": f"{field}.outcomes", "error": "must be a non-empty list of strings"})
        return errors

    def activate(self, *, row: CaseStep, step: dict[str, Any], case: Case, actor: str) -> None:
        sla = step.get("slaHours")
        # The engine sets activated_at just before calling activate.
        due_at = row.activated_at + timedelta(hours=float(sla)) if sla and row.activated_at else None
        team_ref = step.get("team")
        task_open(
            row=row,
            due_at=due_at,
            assign_to=step.get("assignTo"),
            actor=actor,
            # Checked at publish; a team deleted since leaves the task to its role rule alone.
            team=team_resolve(tenant_id=row.tenant_id, ref=team_ref) if team_ref else None,
            strategy=step.get("assignment"),
            case_type_key=case.case_type.key,
        )


def _team_errors(step: dict[str, Any], *, field: str, tenant_id: Any) -> list[dict[str, str]]:
    errors: list[dict[str, str]] = []
    team = step.get("team")
    if team is not None and not (isinstance(team, str) and team):
        errors.append({"field": f"{field}.team", "error": "must be a team id or name"})
    elif team is not None and team_resolve(tenant_id=tenant_id, ref=team) is None:
        errors.append({"field": f"{field}.team", "error": f"no team {team!r} in this tenant"})
    strategy = step.get("assignment")
    if strategy is not None:
        if strategy not in STRATEGIES:
            errors.append({"field": f"{field}.assignment", "error": "must be round_robin or least_loaded"})
        elif team is None:
            errors.append({"field": f"{field}.assignment", "error": "needs a team to choose from"})
    return errors


register(TaskStep())
