"""Console pages for work distribution: bulk actions on the inbox and case list, a case's comments
and the caller's out of office. Each calls the API's services, so rules, audit and messages match."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from django.http.response import HttpResponseBase
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from casemgmt.accounts.models import User
from casemgmt.accounts.services import out_of_office_clear, out_of_office_set
from casemgmt.cases import comments
from casemgmt.cases.selectors import access_case
from casemgmt.cases.services import cases_bulk
from casemgmt.console.views import ConsoleRequest, console_page, page
from casemgmt.workflows.services.bulk import tasks_bulk
from shared.api import errors
from shared.auth.permissions import has_all


def _task_refs(values: list[str]) -> list[tuple[UUID, str]]:
    refs = []
    for value in values:
        case_id, _sep, step_id = value.partition("/")
        try:
            refs.append((UUID(case_id), step_id))
        except ValueError as exc:
            raise errors.ValidationFailed(_("A selected task is not valid."), field="task") from exc
    return refs


@console_page()
@require_POST
def tasks_bulk_page(request: ConsoleRequest) -> HttpResponseBase:
    action = request.POST.get("action", "")
    if action not in ("reassign", "release", "escalate"):
        raise errors.ValidationFailed(_("Choose an action."), field="action")
    if action != "release" and not has_all(request.user.get_permission_strings(), ["tasks:complete"]):
        raise errors.PermissionDenied(_("Requires permission tasks:complete."))
    refs = _task_refs(request.POST.getlist("task"))
    if not refs:
        raise errors.ValidationFailed(_("Select at least one task."), field="task")
    result = tasks_bulk(
        user=request.user,
        action=action,
        tasks=refs,
        assign_to=request.POST.get("assignTo") or None,
        reason=request.POST.get("reason", ""),
    )
    return page(request, "console/bulk_result.html", {"result": result, "back": reverse("console:inbox")})


@console_page("cases:update")
@require_POST
def cases_bulk_page(request: ConsoleRequest) -> HttpResponseBase:
    action = request.POST.get("action", "")
    if action not in ("close", "cancel"):
        raise errors.ValidationFailed(_("Choose an action."), field="action")
    try:
        case_ids = [UUID(value) for value in request.POST.getlist("case")]
    except ValueError as exc:
        raise errors.ValidationFailed(_("A selected case is not valid."), field="case") from exc
    if not case_ids:
        raise errors.ValidationFailed(_("Select at least one case."), field="case")
    result = cases_bulk(
        user=request.user,
        action=action,
        case_ids=case_ids,
        outcome=request.POST.get("outcome", ""),
        reason=request.POST.get("reason", ""),
    )
    return page(request, "console/bulk_result.html", {"result": result, "back": reverse("console:cases")})


@console_page("cases:update")
@require_POST
def case_comment_page(request: ConsoleRequest, case_id: UUID) -> HttpResponseBase:
    case = access_case(user=request.user, case_id=case_id)
    comments.comment_add(user=request.user, case=case, body=request.POST.get("body", ""))
    return redirect(f"{reverse('console:case', args=[case.id])}#h-comments")


def _when(raw: str, field: str) -> datetime:
    """A `datetime-local` value, in the caller's current time zone."""
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError as exc:
        raise errors.ValidationFailed(_("Enter a date and time."), field=field) from exc
    return timezone.make_aware(parsed) if timezone.is_naive(parsed) else parsed


@console_page()
@require_POST
def out_of_office_page(request: ConsoleRequest) -> HttpResponseBase:
    me = User.objects.get(pk=request.user.pk)
    if request.POST.get("clear"):
        out_of_office_clear(user=me, actor=request.user)
    else:
        out_of_office_set(
            user=me,
            actor=request.user,
            starts=_when(request.POST.get("from", ""), "from"),
            until=_when(request.POST.get("until", ""), "until"),
            delegate_to=request.POST.get("delegateTo") or None,
        )
    return redirect(f"{reverse('console:preferences')}?saved=1#h-away")
