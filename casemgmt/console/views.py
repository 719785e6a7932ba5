"""Console pages. Each one checks the same permissions as the matching API operation, reads through
the selectors (tenant-scoped) and writes through the services (audited). Signed-in state is a
Django session with CSRF; the API itself stays token-only."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import Any
from urllib.parse import urlencode
from uuid import UUID

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, logout
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.cache import add_never_cache_headers
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_http_methods, require_POST

from casemgmt.accounts.models import User
from casemgmt.accounts.selectors import assignable_users, display_names, preferences_of
from casemgmt.accounts.services import auth_login
from casemgmt.audit import selectors as audit_selectors
from casemgmt.audit import services as audit_services
from casemgmt.cases.apis import CaseListCreateApi
from casemgmt.cases.schema_words import human_errors
from casemgmt.cases.selectors import access_case, case_list, case_search, case_type_list
from casemgmt.cases.services import allowed_outcomes
from casemgmt.console import details
from casemgmt.console import services as console_services
from casemgmt.console.branding import page_context
from casemgmt.console.forms import FormField, attach_errors, form_data, form_fields, inbox_filters
from casemgmt.console.paging import paged, paged_by
from casemgmt.console.teams_context import case_comments_context, tenant_people
from casemgmt.tenancy import rls
from casemgmt.vault import selectors as vault_selectors
from casemgmt.vault import services as vault_services
from casemgmt.vault.apis import content_response
from casemgmt.vault.uploads import HashingUploadHandler, require_upload
from casemgmt.workflows.access import task_get_readable, task_read_scope
from casemgmt.workflows.apis.inbox import TaskInboxApi
from casemgmt.workflows.definitions import step_definition
from casemgmt.workflows.selectors import case_relations, case_steps, task_inbox
from casemgmt.workflows.services import inbox as inbox_services
from shared.api import errors
from shared.api.pagination import Page
from shared.api.time import iso
from shared.auth.permissions import has_all
from shared.web.clientip import client_ip

View = Callable[..., HttpResponseBase]


class ConsoleRequest(HttpRequest):
    """A request that `console_page` let through: its user is a signed-in tenant member."""

    user: User


def page(request: HttpRequest, template: str, context: dict[str, Any], status: int = 200) -> HttpResponse:
    user = request.user if request.user.is_authenticated else None
    return render(request, template, {**page_context(user), **context}, status=status)


def _refused(request: HttpRequest, exc: errors.ApplicationError) -> HttpResponse:
    return page(request, "console/error.html", {"message": exc.message}, status=exc.status_code)


def console_page(*needed: str) -> Callable[[View], View]:
    """Signed-in tenant members holding `needed` (as the API requires); anonymous visitors go to
    the login page, others get the API's 403/404/409 as a page."""

    def decorate(view: View) -> View:
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            response = signed_in_view(request, *args, **kwargs)
            # A signed-in page is the user's data as of now: no browser or proxy keeps a copy to
            # show again (a live region's reload must read the server, never a cache).
            add_never_cache_headers(response)
            return response

        def signed_in_view(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if not request.user.is_authenticated:
                return redirect(f"{reverse('console:login')}?{urlencode({'next': request.get_full_path()})}")
            try:
                if request.user.tenant_id is None:  # platform operators belong to no tenant
                    raise errors.PermissionDenied("Platform operators use the Django admin.")
                if needed and not has_all(request.user.get_permission_strings(), needed):
                    raise errors.PermissionDenied(f"Requires permission {', '.join(needed)}.")
                # row-level security, as for the API
                rls.enter_tenant(request.user.member_tenant_id, request.user.rls_teams)
                with _locale_of(request.user):
                    return view(request, *args, **kwargs)
            except errors.ApplicationError as exc:  # the API's 400/403/404/409/413 as a page
                return _refused(request, exc)

        return wrapper

    return decorate


@contextmanager
def _locale_of(user: User) -> Iterator[None]:
    """The user's language (Django's own date and number formats) and time zone for the page."""
    preferences = preferences_of(user)
    with translation.override(preferences["language"]), timezone.override(preferences["timezone"]):
        yield


@require_http_methods(["GET", "POST"])
def login_page(request: HttpRequest) -> HttpResponseBase:
    target = request.GET.get("next") or reverse("console:inbox")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = reverse("console:inbox")
    if request.method == "GET":
        return page(request, "console/login.html", {"next": target})
    try:
        _, user = auth_login(
            email=request.POST.get("email", ""),
            password=request.POST.get("password", ""),
            ip=client_ip(request),
        )
    except errors.ApplicationError as exc:  # bad credentials, lockout, disabled account
        return page(
            request, "console/login.html", {"next": target, "error": exc.message}, status=exc.status_code
        )
    login(request, user, backend="casemgmt.accounts.backends.EmailBackend")
    return redirect(target)


@require_POST
def logout_page(request: HttpRequest) -> HttpResponseBase:
    console_services.live_tokens_revoke(session=request.session)  # the page's sockets close too
    logout(request)
    return redirect("console:login")


@console_page()
def inbox_page(request: ConsoleRequest) -> HttpResponseBase:
    task_read_scope(user=request.user)  # tasks:read, tasks:claim or tasks:complete
    context: dict[str, Any] = {
        "case_types": case_type_list(tenant_id=request.user.member_tenant_id, latest=True),
        "tasks": [],
        "people": tenant_people(request.user),  # the bulk reassign's choices
    }
    try:
        filters = inbox_filters(request.GET)
        context["filters"] = filters.values
        per_page = preferences_of(request.user)["itemsPerPage"]
        parsed = TaskInboxApi.FilterSerializer(data=filters.params)
        parsed.is_valid(raise_exception=True)
        tasks = task_inbox(user=request.user, case_type=filters.case_type, **parsed.validated_data)
        context["pager"] = pager = paged(request.GET, tasks.select_related("assigned_to"), per_page)
        context["tasks"] = pager.items
    except errors.ValidationFailed as exc:  # a bad filter: the form again, with the message
        context.update(filters=request.GET, filter_error=exc.message)
        return page(request, "console/inbox.html", context, status=400)
    return page(request, "console/inbox.html", context)


@console_page("tasks:claim")
@require_POST
def task_claim_page(request: ConsoleRequest, case_id: UUID, step_id: str) -> HttpResponseBase:
    row = inbox_services.task_claim(user=request.user, case_id=case_id, step_id=step_id)
    messages.success(request, _("You hold “%(task)s” now.") % {"task": row.name})
    return redirect("console:task", case_id=case_id, step_id=step_id)


def _can(request: ConsoleRequest, permission: str) -> bool:
    return has_all(request.user.get_permission_strings(), [permission])


def _task_context(request: ConsoleRequest, row: Any, fields: list[FormField]) -> dict[str, Any]:
    """The task, its form, and beside it the case's data and documents."""
    step = step_definition(row.case, row.step_id)
    context: dict[str, Any] = {
        "task": row,
        "fields": fields,
        "outcomes": step.get("outcomes") or [],
        "can_complete": _can(request, "tasks:complete"),
        "can_claim": _can(request, "tasks:claim"),
        "case_data": details.labelled(row.case.case_type.schema, row.case.data),
        "holder": display_names(tenant_id=row.tenant_id, ids=[row.assigned_to_id]).get(
            str(row.assigned_to_id), ""
        )
        if row.assigned_to_id
        else "",
    }
    context["can_release"] = (
        row.status == "active"
        and bool(row.assigned_to_id)
        and (row.assigned_to_id == request.user.id or _can(request, "tasks:assign"))
    )
    if context["can_complete"] and row.status == "active":  # reassign and escalate need tasks:complete
        context["assignees"] = assignable_users(tenant_id=row.tenant_id, role=row.role)
    if _can(request, "vault:read"):
        context["documents"] = vault_selectors.document_list(case=row.case)[:20]
    return context


@console_page()
@require_http_methods(["GET", "POST"])
def task_page(request: ConsoleRequest, case_id: UUID, step_id: str) -> HttpResponseBase:
    row = task_get_readable(user=request.user, case_id=case_id, step_id=step_id)
    schema = step_definition(row.case, row.step_id).get("formSchema") or {"type": "object"}
    fields = form_fields(schema, row.result or row.draft or {})
    if request.method == "GET":
        return page(request, "console/task.html", _task_context(request, row, fields))
    if not _can(request, "tasks:complete"):
        raise errors.PermissionDenied(_("Requires permission tasks:complete."))
    data = form_data(fields, request.POST)
    try:
        inbox_services.task_complete(
            user=request.user,
            case_id=case_id,
            step_id=step_id,
            data=data,
            outcome=request.POST.get("outcome") or None,
        )
    except errors.ValidationFailed as exc:
        fields = form_fields(schema, data)
        context = _task_context(request, row, fields)
        context["form_errors"] = attach_errors(fields, _in_words(schema, data, exc))
        context["chosen_outcome"] = request.POST.get("outcome", "")
        return page(request, "console/task.html", context, status=400)
    messages.success(request, _("“%(task)s” completed.") % {"task": row.name})
    return redirect("console:case", case_id=case_id)


def _in_words(
    schema: dict[str, Any], data: dict[str, Any], exc: errors.ValidationFailed
) -> list[dict[str, str]]:
    """The service's refusal with its schema errors said in words (the same checks, run again
    for their structure); its other errors (an outcome, a state) as the service gave them."""
    worded = human_errors(schema, data)
    others = [e for e in (exc.errors or []) if not str(e.get("field", "")).startswith("data")]
    if not exc.errors:
        others = [{"field": "", "error": exc.message}]
    elif not worded:  # not schema errors after all: keep the service's own
        return list(exc.errors)
    return worded + [{"field": e.get("field", ""), "error": _field_error(e)} for e in others]


def _field_error(error: dict[str, str]) -> str:
    if error.get("field") == "outcome":
        return _("Outcome %(error)s") % {"error": error["error"]}
    return error["error"]


@console_page("tasks:complete")
@require_POST
def task_reassign_page(request: ConsoleRequest, case_id: UUID, step_id: str) -> HttpResponseBase:
    # Another tenant's (or a hidden) task is a 404 before the form is looked at, as in the API.
    task_get_readable(user=request.user, case_id=case_id, step_id=step_id)
    row = inbox_services.task_reassign(
        user=request.user, case_id=case_id, step_id=step_id, assign_to=_uuid(request.POST.get("assignTo"))
    )
    name = display_names(tenant_id=row.tenant_id, ids=[row.assigned_to_id]).get(str(row.assigned_to_id))
    messages.success(request, _("“%(task)s” is now with %(name)s.") % {"task": row.name, "name": name})
    return redirect("console:task", case_id=case_id, step_id=step_id)


@console_page()
@require_POST
def task_release_page(request: ConsoleRequest, case_id: UUID, step_id: str) -> HttpResponseBase:
    """The holder (or a holder of tasks:assign) gives the task back to its candidates; the
    service checks who may, as for the API."""
    row = inbox_services.task_release(user=request.user, case_id=case_id, step_id=step_id)
    messages.success(
        request, _("“%(task)s” released: anyone who may claim it can take it now.") % {"task": row.name}
    )
    return redirect("console:task", case_id=case_id, step_id=step_id)


@console_page("tasks:complete")
@require_POST
def task_escalate_page(request: ConsoleRequest, case_id: UUID, step_id: str) -> HttpResponseBase:
    task_get_readable(user=request.user, case_id=case_id, step_id=step_id)  # 404 before the form
    reason = request.POST.get("reason", "").strip()[:2000]
    if not reason:
        raise errors.ValidationFailed(_("Give a reason to escalate."), field="reason")
    target = request.POST.get("escalateTo") or None
    row = inbox_services.task_escalate(
        user=request.user,
        case_id=case_id,
        step_id=step_id,
        reason=reason,
        escalate_to=_uuid(target) if target else None,
    )
    messages.success(request, _("“%(task)s” escalated.") % {"task": row.name})
    return redirect("console:task", case_id=case_id, step_id=step_id)


def _uuid(raw: str | None) -> UUID:
    try:
        return UUID(str(raw))
    except ValueError:
        raise errors.ValidationFailed(_("Choose a person from the list."), field="assignTo") from None


def _case_filters(request: ConsoleRequest) -> dict[str, Any]:
    filters = CaseListCreateApi.FilterSerializer(data=request.GET, context={"user": request.user})
    filters.is_valid(raise_exception=True)
    return filters.validated_data


@console_page("cases:read")
def case_list_page(request: ConsoleRequest) -> HttpResponseBase:
    q = request.GET.get("q", "").strip()
    per_page = preferences_of(request.user)["itemsPerPage"]
    tenant_id = request.user.member_tenant_id
    can_create = _can(request, "cases:create")
    if q:

        def search(window: Page) -> tuple[list[Any], int]:
            hits, total, _more = case_search(
                tenant_id=tenant_id, teams=request.user.rls_teams, q=q, page=window
            )
            return hits, total

        pager = paged_by(request.GET, search, per_page)
        return page(
            request,
            "console/cases.html",
            {"q": q, "hits": pager.items, "pager": pager, "can_create": can_create},
        )
    pager = paged(request.GET, case_list(user=request.user, **_case_filters(request)), per_page)
    return page(
        request,
        "console/cases.html",
        {"q": "", "cases": pager.items, "pager": pager, "can_create": can_create},
    )


@console_page("cases:read")
def case_page(request: ConsoleRequest, case_id: UUID) -> HttpResponseBase:
    case = access_case(user=request.user, case_id=case_id)
    per_page = preferences_of(request.user)["itemsPerPage"]
    steps = list(case_steps(case=case).select_related("assigned_to", "child_case"))
    parent, children = case_relations(case=case)
    context: dict[str, Any] = {
        "case": case,
        "parent": parent,
        "children": children,
        "steps": details.step_views(case, steps),
        "graph": details.workflow_graph(case, steps),
        "case_data": details.labelled(case.case_type.schema, case.data),
        "ready_to_close": details.ready_to_close(case, steps),
        "can_finish": _can(request, "cases:update") and case.status == "active",
        "outcomes": allowed_outcomes(case) or [],
        **case_comments_context(request.user, case),
    }
    if _can(request, "vault:read"):
        context["documents"] = paged(
            request.GET, vault_selectors.document_list(case=case), per_page, param="docs"
        )
    context["can_upload"] = _can(request, "vault:upload")
    if _can(request, "audit:read"):
        events = paged(
            request.GET,
            audit_selectors.case_event_list(tenant_id=case.tenant_id, case_id=case.id),
            per_page,
            param="events",
        )
        context["events"] = events
        context["event_rows"] = details.event_views(case.tenant_id, list(events.items))
    return page(request, "console/case.html", context)


@console_page("audit:read")
@require_POST
def case_verify_page(request: ConsoleRequest, case_id: UUID) -> HttpResponseBase:
    case = access_case(user=request.user, case_id=case_id)
    events = audit_selectors.case_events(tenant_id=case.tenant_id, case_id=case.id)
    result = audit_services.verify_events_in_chain(tenant_id=case.tenant_id, events=events.iterator())
    audit_services.audit_record_verification(user=request.user, scope=f"audit/cases/{case.id}", result=result)
    return page(request, "console/verify.html", {"result": result})


@console_page("vault:read")
def document_download_page(request: ConsoleRequest, document_id: UUID) -> HttpResponseBase:
    document = vault_selectors.access_document(user=request.user, document_id=document_id)
    vault_services.document_record_download(actor=str(request.user.id), document=document, via="console")
    return content_response(document, redirect=type(redirect("/")))


# The CSRF check reads the form, which would parse the file with Django's default handlers; the
# vault's hashing handler (streamed, size-capped) must be in place first, so the check runs after.
@csrf_exempt
@console_page("vault:upload")
@require_POST
def document_upload_page(request: ConsoleRequest, case_id: UUID) -> HttpResponseBase:
    request.upload_handlers = [HashingUploadHandler(request, max_bytes=settings.VAULT_MAX_UPLOAD_BYTES)]
    return _document_upload(request, case_id)


@csrf_protect
def _document_upload(request: ConsoleRequest, case_id: UUID) -> HttpResponseBase:
    case = access_case(user=request.user, case_id=case_id)
    description = request.POST.get("description", "")[:2000]
    upload = require_upload(request.FILES)
    document = vault_services.document_upload(
        user=request.user, upload=upload, case=case, description=description
    )
    messages.success(request, _("“%(file)s” uploaded.") % {"file": document.filename})
    return redirect("console:case", case_id=case.id)


@console_page("tasks:complete")
@require_POST
def task_draft_page(request: ConsoleRequest, case_id: UUID, step_id: str) -> HttpResponseBase:
    """Autosave: the form as typed so far, kept on the task (no validation; not audited) and put
    back into the form when the page is opened again. Answers the status line only."""
    row = task_get_readable(user=request.user, case_id=case_id, step_id=step_id)
    fields = form_fields(step_definition(row.case, row.step_id).get("formSchema") or {"type": "object"})
    try:
        row = inbox_services.task_save_draft(
            user=request.user, case_id=case_id, step_id=step_id, data=form_data(fields, request.POST)
        )
    except errors.ApplicationError as exc:  # held by someone else, completed meanwhile
        return render(request, "console/draft_status.html", {"error": exc.message}, status=exc.status_code)
    return render(request, "console/draft_status.html", {"task": row})


@console_page()
@require_POST
def live_ticket_page(request: ConsoleRequest) -> HttpResponseBase:
    issued = console_services.live_ticket_issue(user=request.user, session=request.session)
    return JsonResponse({"ticket": issued.ticket, "expiresAt": iso(issued.expires_at)})
