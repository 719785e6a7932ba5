"""Console pages that start and finish cases: the new-case form generated from the case type's
JSON Schema (the API's validation, errors in words), and close / cancel."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from django.contrib import messages
from django.http.response import HttpResponseBase
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from casemgmt.cases import services as case_services
from casemgmt.cases.schema_words import human_errors
from casemgmt.cases.selectors import access_case, case_type_latest, case_type_list
from casemgmt.console.forms import attach_errors, form_data, form_fields
from casemgmt.console.views import ConsoleRequest, console_page, page
from casemgmt.workflows.services.control import case_message_deliver
from shared.api import errors


@console_page("cases:create")
@require_http_methods(["GET", "POST"])
def case_new_page(request: ConsoleRequest) -> HttpResponseBase:
    """First the case type (a list to choose from), then its form."""
    tenant_id = request.user.member_tenant_id
    key = (request.POST.get("type") or request.GET.get("type") or "").strip()
    types = list(case_type_list(tenant_id=tenant_id, latest=True).order_by("display_name", "key"))
    if not key:
        return page(request, "console/case_new.html", {"case_types": types})
    case_type = case_type_latest(tenant_id=tenant_id, key=key)  # another tenant's key: 404
    schema: dict[str, Any] = case_type.schema if isinstance(case_type.schema, dict) else {}
    context: dict[str, Any] = {"case_types": types, "case_type": case_type, "fields": form_fields(schema)}
    if request.method == "GET":
        return page(request, "console/case_new.html", context)
    fields = form_fields(schema)
    data = form_data(fields, request.POST)
    display_name = request.POST.get("displayName", "").strip()[:300] or None
    try:
        case = case_services.case_create(
            user=request.user, case_type=case_type, data=data, display_name=display_name
        )
    except errors.ValidationFailed as exc:
        fields = form_fields(schema, data)
        worded = human_errors(schema, data) or list(exc.errors or [{"field": "", "error": exc.message}])
        context.update(
            fields=fields, form_errors=attach_errors(fields, worded), display_name=display_name or ""
        )
        return page(request, "console/case_new.html", context, status=400)
    messages.success(request, _("%(number)s started.") % {"number": case.case_number})
    return redirect("console:case", case_id=case.id)


@console_page("cases:update")
@require_POST
def case_close_page(request: ConsoleRequest, case_id: UUID) -> HttpResponseBase:
    case = access_case(user=request.user, case_id=case_id)
    outcome = request.POST.get("outcome", "").strip()[:200]
    reason = request.POST.get("reason", "").strip()[:2000]
    try:
        case = case_services.case_close(user=request.user, case=case, outcome=outcome, reason=reason)
    except (errors.ValidationFailed, errors.InvalidState) as exc:
        messages.error(request, _("Not closed: %(why)s") % {"why": _why(exc)})
    else:
        messages.success(request, _("%(number)s closed.") % {"number": case.case_number})
    return redirect("console:case", case_id=case_id)


@console_page("cases:update")
@require_POST
def case_cancel_page(request: ConsoleRequest, case_id: UUID) -> HttpResponseBase:
    case = access_case(user=request.user, case_id=case_id)
    reason = request.POST.get("reason", "").strip()[:2000]
    if not reason:
        messages.error(request, _("Not cancelled: give a reason."))
        return redirect("console:case", case_id=case_id)
    try:
        case = case_services.case_cancel(user=request.user, case=case, reason=reason)
    except errors.InvalidState as exc:
        messages.error(request, _("Not cancelled: %(why)s") % {"why": _why(exc)})
    else:
        messages.success(request, _("%(number)s cancelled.") % {"number": case.case_number})
    return redirect("console:case", case_id=case_id)


@console_page("cases:update")
@require_POST
def case_message_page(request: ConsoleRequest, case_id: UUID, name: str) -> HttpResponseBase:
    """Sends message `name` to the case, as `POST /cases/{id}/messages/{name}` does: completes the
    active `wait` step for it with the optional JSON data as its result."""
    case = access_case(user=request.user, case_id=case_id)
    raw = request.POST.get("data", "").strip()
    try:
        data = json.loads(raw) if raw else None
    except ValueError:
        messages.error(request, _("Message not sent: the data is not valid JSON."))
        return redirect("console:case", case_id=case_id)
    try:
        case_message_deliver(user=request.user, case=case, name=name, data=data)
    except errors.InvalidState:
        messages.error(request, _("Message not sent: no step is waiting for “%(name)s”.") % {"name": name})
    else:
        messages.success(request, _("Message “%(name)s” sent.") % {"name": name})
    return redirect("console:case", case_id=case_id)


def _why(exc: errors.ApplicationError) -> str:
    if isinstance(exc, errors.InvalidState):
        return _("the case is no longer active.")
    if any(e.get("field") == "outcome" for e in exc.errors):
        return _("choose one of the outcomes offered.")
    return exc.message
