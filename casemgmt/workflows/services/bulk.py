"""`POST /tasks/bulk`: reassign, release or escalate many tasks, each as its own request would be.

Each item is first checked as `GET /tasks/{caseId}/{stepId}` would check it (so a caller acts only
on tasks it may see: another tenant's is 404, a task outside a case worker's own ones 403; one
read for all items), then the single action's service runs it in its own transaction with its
own audit and messages.
"""

from __future__ import annotations

from typing import Any

from django.db.models import prefetch_related_objects

from casemgmt.accounts.models import User
from casemgmt.workflows.access import tasks_readable
from casemgmt.workflows.selectors import task_inbox
from casemgmt.workflows.services import inbox
from shared.api.bulk import BULK_MAX, bulk_run, check_count
from shared.api.errors import ValidationFailed

TASK_ACTIONS = ("reassign", "release", "escalate")
TaskRef = tuple[Any, str]


def tasks_matching(*, user: User, filters: dict[str, Any]) -> list[TaskRef]:
    """The tasks an inbox query with `filters` lists (at most BULK_MAX, else 400)."""
    refs = list(task_inbox(user=user, **filters).values_list("case_id", "step_id")[: BULK_MAX + 1])
    check_count(len(refs), "filter")
    return refs


def tasks_bulk(
    *,
    user: User,
    action: str,
    tasks: list[TaskRef],
    assign_to: Any = None,
    reason: str = "",
    escalate_to: Any = None,
) -> dict[str, Any]:
    check_count(len(tasks), "tasks")
    if action == "reassign" and assign_to is None:
        raise ValidationFailed("assignTo is required to reassign", field="assignTo")
    if action == "escalate" and not reason:
        raise ValidationFailed("reason is required to escalate", field="reason")
    # Read once for all items: the caller's roles, and the target (its roles and teams with it).
    prefetch_related_objects([user], "roles")
    if assign_to is not None:
        assign_to = inbox.tenant_user(tenant_id=user.member_tenant_id, user_id=assign_to, field="assignTo")
        prefetch_related_objects([assign_to], "roles")

    readable = tasks_readable(user=user, refs=tasks)

    def act(ref: TaskRef) -> None:
        case_id, step_id = ref
        readable(ref)
        if action == "reassign":
            inbox.task_reassign(user=user, case_id=case_id, step_id=step_id, assign_to=assign_to)
        elif action == "release":
            inbox.task_release(user=user, case_id=case_id, step_id=step_id)
        else:
            inbox.task_escalate(
                user=user, case_id=case_id, step_id=step_id, reason=reason, escalate_to=escalate_to
            )

    return bulk_run(tasks, act, lambda ref: {"caseId": str(ref[0]), "stepId": ref[1]})
