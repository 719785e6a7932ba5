"""Who may read human tasks.

`tasks:read` reads every task of the tenant. A principal holding only `tasks:claim` or
`tasks:complete` (the seeded Case Worker role) reads the tasks it may act on: the open tasks it holds
or may claim and the ones it completed, the same set its inbox lists. Anyone else gets 403.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from casemgmt.cases.selectors import team_access_q
from casemgmt.workflows.models import CaseStep
from casemgmt.workflows.selectors import TASK_STATUSES, _visible_to, task_get
from shared.api.errors import NotFound, PermissionDenied
from shared.auth.permissions import has_permission

if TYPE_CHECKING:
    from casemgmt.accounts.models import User


def task_read_scope(*, user: User) -> Literal["all", "own"]:
    """Returns "all" with `tasks:read`, "own" with only `tasks:claim` or `tasks:complete`; else 403."""
    granted = user.get_permission_strings()
    if has_permission(granted, "tasks:read"):
        return "all"
    if has_permission(granted, "tasks:claim") or has_permission(granted, "tasks:complete"):
        return "own"
    raise PermissionDenied("Requires permission tasks:read.")


def task_get_readable(*, user: User, case_id: Any, step_id: str) -> CaseStep:
    """A task the user may read: 403 without any task permission, or, for a reader limited to its
    own tasks, for a task outside them; 404 when there is no such task."""
    scope = task_read_scope(user=user)
    row = task_get(user=user, case_id=case_id, step_id=step_id)
    if scope == "own" and not CaseStep.objects.filter(_visible_to(user), pk=row.pk).exists():
        raise PermissionDenied("Requires permission tasks:read for a task you may not act on.")
    return row


def tasks_readable(*, user: User, refs: list[tuple[Any, str]]) -> Callable[[tuple[Any, str]], None]:
    """For a bulk action: one read of which of `refs` exist and which the caller may read, then a
    check per item that raises as `task_get_readable` would (404, or 403 for a task outside a
    limited reader's own). Each item's service still locks and re-checks its task."""
    scope = task_read_scope(user=user)
    tasks = CaseStep.objects.filter(
        team_access_q(user, "case__"),
        tenant_id=user.member_tenant_id,
        is_task=True,
        status__in=TASK_STATUSES,
        case_id__in={case_id for case_id, _ in refs},
    )
    existing = {(str(c), s) for c, s in tasks.values_list("case_id", "step_id")}
    visible = (
        existing
        if scope == "all"
        else {(str(c), s) for c, s in tasks.filter(_visible_to(user)).values_list("case_id", "step_id")}
    )

    def check(ref: tuple[Any, str]) -> None:
        key = (str(ref[0]), ref[1])
        if key not in existing:
            raise NotFound("Task not found.")
        if key not in visible:
            raise PermissionDenied("Requires permission tasks:read for a task you may not act on.")

    return check
