"""Console pages. Each one needs the role the matching API operation needs (viewer reads, operator
schedules and cancels, admin purges), reads through the selectors and writes through the services
the API uses (so every write is audited under the signed-in user's name). Signed-in state is a
Django session with CSRF; a signed-in user's role comes from the account, as for the admin site."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import authenticate, login, logout
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods, require_POST

from orchestrator.agents import selectors as agent_selectors
from orchestrator.agents import services as agent_services
from orchestrator.console import forms, gantt, grid, preferences
from orchestrator.definitions import selectors as definition_selectors
from orchestrator.definitions.apis import DagListApi, TaskListApi
from orchestrator.definitions.models import Context, Dag, ParameterSet, TaskDefinition
from orchestrator.runs import selectors as run_selectors
from orchestrator.runs import services as run_services
from orchestrator.runs.apis import RunListApi
from orchestrator.runs.inputs import ScheduleOptionsSerializer
from orchestrator.runs.models import TERMINAL, Run, TaskRun
from orchestrator.runs.selectors import RUN_STATUSES
from orchestrator.security.principals import Principal, principal_from_session_user
from shared.api import errors
from shared.api.handler import field_errors
from shared.api.pagination import get_page
from shared.api.problems import Problems
from shared.web.graph import Node, layout

View = Callable[..., HttpResponseBase]
PAGE_SIZE = 25
LOG_LINES_ON_PAGE = 5000  # the rest arrives through the follower


def principal_of(request: HttpRequest) -> Principal:
    return principal_from_session_user(request.user)  # type: ignore[arg-type]


def page(request: HttpRequest, template: str, context: dict[str, Any], status: int = 200) -> HttpResponse:
    """Rendered in the user's language and time zone, with their theme."""
    base: dict[str, Any] = {"oidc_enabled": settings.OIDC_ENABLED}
    if request.user.is_authenticated:
        principal = principal_of(request)
        base.update(
            role=principal.role,
            can_operate=principal.has_role("operator"),
            can_admin=principal.has_role("admin"),
        )
    with preferences.applied(request) as chosen:
        scheme = {"system": "auto"}.get(chosen["theme"], chosen["theme"])  # the design system's names
        base.update(scheme=scheme, language=chosen["language"])
        return render(request, template, {**base, **context}, status=status)


def _to_sign_in(request: HttpRequest) -> HttpResponse:
    """A signed-out htmx poll (the session ended while a run page was open) sends the whole page
    to the sign-in page rather than swapping the form into the polled fragment."""
    if request.headers.get("HX-Request") and not request.headers.get("HX-Boosted"):
        current = urlsplit(request.headers.get("HX-Current-URL", ""))
        target = current.path + (f"?{current.query}" if current.query else "") or reverse("console:runs")
        response = HttpResponse(status=204)
        response["HX-Redirect"] = f"{reverse('console:login')}?{urlencode({'next': target})}"
        return response
    return redirect(f"{reverse('console:login')}?{urlencode({'next': request.get_full_path()})}")


def console_page(role: str = "viewer") -> Callable[[View], View]:
    """Signed-in users holding `role` (as the API requires); anonymous visitors go to the sign-in
    page, others get the API's 400/403/404/409 as a page."""

    def decorate(view: View) -> View:
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if not request.user.is_authenticated:
                return _to_sign_in(request)
            # The whole view in the user's language and zone: messages it adds are written in them.
            with preferences.applied(request):
                try:
                    if not principal_of(request).has_role(role):
                        raise errors.PermissionDenied(_("Requires the %(role)s role.") % {"role": role})
                    return view(request, *args, **kwargs)
                except errors.ApplicationError as exc:
                    context = {"message": exc.message}
                    return page(request, "orch_console/error.html", context, status=exc.status_code)

        return wrapper

    return decorate


@require_http_methods(["GET", "POST"])
def login_page(request: HttpRequest) -> HttpResponseBase:
    target = request.GET.get("next") or reverse("console:runs")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = reverse("console:runs")
    if request.method == "GET":
        return page(request, "orch_console/login.html", {"next": target})
    user = authenticate(
        request, username=request.POST.get("username", ""), password=request.POST.get("password", "")
    )
    if user is None:  # a wrong password and a disabled account look the same
        context = {"next": target, "error": _("Invalid username or password.")}
        return page(request, "orch_console/login.html", context, status=401)
    login(request, user)
    return redirect(target)


@require_POST
def logout_page(request: HttpRequest) -> HttpResponseBase:
    logout(request)
    return redirect("console:login")


def _paging(request: HttpRequest, total: int) -> dict[str, Any]:
    """Previous/next links that keep the page's filters."""
    cut = get_page(request.GET, default_limit=PAGE_SIZE, max_limit=100)

    def link(offset: int) -> str:
        query = request.GET.copy()
        query.pop("part", None)  # a refresh's own marker: the links lead to whole pages
        query["offset"] = str(offset)
        return "?" + query.urlencode()

    return {
        "total": total,
        "first": cut.offset + 1 if total else 0,
        "last": min(cut.offset + cut.limit, total),
        "previous": link(max(cut.offset - cut.limit, 0)) if cut.offset > 0 else "",
        "next": link(cut.offset + cut.limit) if cut.offset + cut.limit < total else "",
        "slice": slice(cut.offset, cut.offset + cut.limit),
    }


def _without_part(request: HttpRequest) -> str:
    query = request.GET.copy()
    query.pop("part", None)
    return query.urlencode()


def _part(request: HttpRequest, name: str) -> bool:
    """A list's own refresh (htmx, not a boosted navigation) asks for that part of the page alone."""
    return bool(
        request.headers.get("HX-Request")
        and not request.headers.get("HX-Boosted")
        and request.GET.get("part") == name
    )


def _paged(request: HttpRequest, queryset: Any) -> tuple[list[Any], dict[str, Any]]:
    paging = _paging(request, queryset.count())
    return list(queryset[paging.pop("slice")]), paging


# Definitions ---------------------------------------------------------------------------------


def _task_total(dag: Dag) -> int | None:
    """Every task a run of the DAG executes (the tasks it names and all they depend on), as the
    graph shows them; None when a task it names was deleted since."""
    try:
        return len(definition_selectors.dependency_closure([entry["id"] for entry in dag.tasks]))
    except errors.ValidationFailed:
        return None


@console_page()
def dag_list_page(request: HttpRequest) -> HttpResponseBase:
    filters = DagListApi.FilterSerializer(data=request.GET)
    filters.is_valid(raise_exception=True)
    dags, paging = _paged(request, definition_selectors.dag_list(**filters.validated_data))
    for dag in dags:
        dag.task_total = _task_total(dag)
    return page(
        request,
        "orch_console/dags.html",
        {"dags": dags, "paging": paging, "q": request.GET.get("filter", "")},
    )


@console_page()
def task_list_page(request: HttpRequest) -> HttpResponseBase:
    filters = TaskListApi.FilterSerializer(data=request.GET)
    filters.is_valid(raise_exception=True)
    tasks, paging = _paged(request, definition_selectors.task_list(**filters.validated_data))
    return page(
        request,
        "orch_console/tasks.html",
        {"tasks": tasks, "paging": paging, "q": request.GET.get("filter", "")},
    )


def _version(request: HttpRequest) -> int | None:
    raw = request.GET.get("version")
    if raw is None:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise errors.ValidationFailed("version must be a positive integer", field="version")
    return int(raw)


def _schedule_choices() -> dict[str, Any]:
    return {
        "parameter_sets": list(ParameterSet.objects.order_by("id").values_list("id", flat=True)),
        "contexts": list(Context.objects.order_by("id").values_list("id", flat=True)),
    }


def _definition_graph(definitions: dict[str, TaskDefinition]) -> Any:
    nodes = [
        Node(
            id=t.id,
            label=t.id,
            status="defined",
            href=reverse("console:task", args=[t.id]),
            upstream=[d for d in t.dependencies if d in definitions],
        )
        for t in definitions.values()
    ]
    return layout(nodes)


def _dag_context(dag_id: str, version: int | None) -> dict[str, Any]:
    if version is None:
        dag = definition_selectors.get_or_404(Dag, dag_id, "DAG")
    else:
        dag = definition_selectors.dag_version(dag_id=dag_id, version=version)
    context: dict[str, Any] = {
        "dag": dag,
        "viewing_version": version,
        "versions": definition_selectors.definition_versions(kind="dag", definition_id=dag_id),
    }
    try:
        closure = definition_selectors.dependency_closure([entry["id"] for entry in dag.tasks])
    except errors.ValidationFailed as exc:  # a task the DAG names was deleted since
        context["graph_problem"] = exc.message
        closure = {}
    context["graph"] = _definition_graph(closure) if closure else None
    context["fields"] = forms.parameter_fields(list(closure.values()), qualified=True)
    return context


@console_page()
def dag_page(request: HttpRequest, dag_id: str) -> HttpResponseBase:
    context = {**_dag_context(dag_id, _version(request)), **_schedule_choices()}
    return page(request, "orch_console/dag.html", context)


def _task_context(task_id: str, version: int | None) -> dict[str, Any]:
    if version is None:
        task = definition_selectors.get_or_404(TaskDefinition, task_id, "Task")
    else:
        task = definition_selectors.task_version(task_id=task_id, version=version)
    return {
        "task": task,
        "viewing_version": version,
        "versions": definition_selectors.definition_versions(kind="task", definition_id=task_id),
        "fields": forms.parameter_fields([task], qualified=False),
    }


@console_page()
def task_page(request: HttpRequest, task_id: str) -> HttpResponseBase:
    context = {**_task_context(task_id, _version(request)), **_schedule_choices()}
    return page(request, "orch_console/task.html", context)


# Scheduling ----------------------------------------------------------------------------------


def _schedule(
    request: HttpRequest, fields: list[forms.ParameterField], schedule: Callable[[dict[str, Any], Any], Run]
) -> Run:
    """Reads the form into the API's body, checks it as the API does, and schedules."""
    body, form_problems = forms.schedule_body(request.POST, fields)
    problems = Problems()
    problems.errors.extend(form_problems)
    options = ScheduleOptionsSerializer(data=body)
    if not options.is_valid():
        problems.errors.extend(field_errors(options.errors))
    problems.raise_if_any()
    return schedule(body, options.validated_data["options"])


def _schedule_refused(
    request: HttpRequest, template: str, context: dict[str, Any], exc: errors.ValidationFailed
) -> HttpResponse:
    context["form_errors"] = forms.attach_errors(context["fields"], exc.errors or [{"error": exc.message}])
    context["form_values"] = request.POST
    return page(request, template, {**context, **_schedule_choices()}, status=400)


@console_page("operator")
@require_POST
def dag_schedule_page(request: HttpRequest, dag_id: str) -> HttpResponseBase:
    context = _dag_context(dag_id, None)
    actor = request.user.get_username()
    try:
        run = _schedule(
            request,
            context["fields"],
            lambda body, options: run_services.run_schedule_dag(actor=actor, dag_id=dag_id, options=options)[
                0
            ],
        )
    except errors.ValidationFailed as exc:
        return _schedule_refused(request, "orch_console/dag.html", context, exc)
    return redirect("console:run", run_id=run.run_id)


@console_page("operator")
@require_POST
def task_schedule_page(request: HttpRequest, task_id: str) -> HttpResponseBase:
    context = _task_context(task_id, None)
    actor = request.user.get_username()

    def schedule(body: dict[str, Any], options: Any) -> Run:
        run, _plan = run_services.run_schedule_task(
            actor=actor, task_id=task_id, options=options, queue=body.get("queue")
        )
        return run

    try:
        run = _schedule(request, context["fields"], schedule)
    except errors.ValidationFailed as exc:
        return _schedule_refused(request, "orch_console/task.html", context, exc)
    return redirect("console:run", run_id=run.run_id)


# Runs ----------------------------------------------------------------------------------------


RUN_FILTERS = ("status", "dag_id", "schedule_id")


def _run_filters(request: HttpRequest) -> tuple[dict[str, str], dict[str, Any]]:
    """The filters in the URL, as given and as the API's list reads them."""
    given = {name: request.GET[name] for name in RUN_FILTERS if request.GET.get(name)}
    parsed = RunListApi.FilterSerializer(data=given)
    parsed.is_valid(raise_exception=True)
    return given, parsed.validated_data


@console_page()
def run_list_page(request: HttpRequest) -> HttpResponseBase:
    """Newest first. The table refreshes itself (the same URL, asked for by htmx, answers the
    table alone); console.js holds the refresh while the pointer or focus is in it or rows are
    selected, so nothing moves under the operator."""
    given, filters = _run_filters(request)
    runs, paging = _paged(request, run_selectors.run_list(**filters))
    run_selectors.with_counts(runs)
    context = {
        "runs": runs,
        "paging": paging,
        "statuses": RUN_STATUSES,
        "filters": given,
        "query": _without_part(request),
    }
    return page(
        request,
        "orch_console/_runs_table.html" if _part(request, "table") else "orch_console/runs.html",
        context,
    )


def _stable(task_runs: list[TaskRun]) -> list[TaskRun]:
    """Task runs in the graph's reading order (layer by layer), which depends on the run's shape
    only: nodes and rows keep their places while statuses and start times change between polls."""
    by_id = {tr.id: tr for tr in task_runs}
    nodes = [
        Node(id=tr.id, label=tr.task_id, status="", upstream=list(tr.upstream))
        for tr in sorted(task_runs, key=lambda tr: (tr.task_id, tr.id))
    ]
    return [by_id[node.id] for node in layout(nodes).nodes]


def _run_graph(run: Run, task_runs: list[TaskRun]) -> Any:
    nodes = [
        Node(
            id=tr.id,
            label=tr.task_id,
            status=tr.status,
            href=reverse("console:task-run", args=[tr.id]),
            upstream=list(tr.upstream),
        )
        for tr in task_runs
    ]
    return layout(nodes)


def _run_context(run_id: str) -> dict[str, Any]:
    run = run_selectors.run_get(run_id)
    task_runs = _stable(run_selectors.task_runs_of(run))
    return {
        "run": run,
        "task_runs": task_runs,
        "graph": _run_graph(run, task_runs),
        "gantt": gantt.bars(run, task_runs),
        "live": run.status not in TERMINAL,
    }


@console_page()
def run_page(request: HttpRequest, run_id: str) -> HttpResponseBase:
    return page(request, "orch_console/run.html", _run_context(run_id))


@console_page()
def run_live_page(request: HttpRequest, run_id: str) -> HttpResponseBase:
    """The graph and task table alone, polled by the run page while the run is open; once it is
    finished the fragment comes without its polling trigger, so polling stops."""
    context = _run_context(run_id)
    context["announce"] = context["run"].status != request.GET.get("seen")
    return page(request, "orch_console/run_live.html", context)


@console_page("operator")
@require_POST
def run_cancel_page(request: HttpRequest, run_id: str) -> HttpResponseBase:
    run_services.run_cancel(actor=request.user.get_username(), run_id=run_id, force=False)
    messages.success(request, _("Run %(run)s cancelled.") % {"run": run_id})
    return redirect("console:run", run_id=run_id)


@console_page("operator")
@require_POST
def run_pause_page(request: HttpRequest, run_id: str) -> HttpResponseBase:
    run_services.run_pause(actor=request.user.get_username(), run_id=run_id)
    messages.success(request, _("Run %(run)s paused.") % {"run": run_id})
    return redirect("console:run", run_id=run_id)


@console_page("operator")
@require_POST
def run_resume_page(request: HttpRequest, run_id: str) -> HttpResponseBase:
    run_services.run_resume(actor=request.user.get_username(), run_id=run_id)
    messages.success(request, _("Run %(run)s resumed.") % {"run": run_id})
    return redirect("console:run", run_id=run_id)


@console_page("operator")
@require_POST
def run_rerun_page(request: HttpRequest, run_id: str) -> HttpResponseBase:
    """A new run of the same versions: every task, or only the failed ones (completed upstream
    results carried over), as `POST /api/rerun/<run>` does."""
    run = run_services.run_rerun(
        actor=request.user.get_username(),
        run_id=run_id,
        failed_only=request.POST.get("failed_only") == "true",
        reset_params=False,
        from_task=None,
    )
    messages.success(request, _("Rerun %(new)s of %(run)s started.") % {"new": run.run_id, "run": run_id})
    return redirect("console:run", run_id=run.run_id)


@console_page()
def task_run_page(request: HttpRequest, task_run_id: str) -> HttpResponseBase:
    task_run = run_selectors.task_run_get(task_run_id)
    lines = run_selectors.task_log_lines(task_run=task_run, limit=LOG_LINES_ON_PAGE)
    context = {
        "task_run": task_run,
        "lines": [line for _, line in lines],
        "after": lines[-1][0] if lines else 0,
        "finished": task_run.status in TERMINAL,
        "duration_running": task_run.status == "running",
    }
    return page(request, "orch_console/task_run.html", context)


@console_page()
def task_run_log_page(request: HttpRequest, task_run_id: str) -> HttpResponseBase:
    """The whole captured output as a text file to download."""
    task_run = run_selectors.task_run_get(task_run_id)
    lines, _more = run_selectors.task_logs(task_run=task_run)
    response = HttpResponse("".join(f"{line}\n" for line in lines), content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{task_run.id}.log"'
    return response


# Bulk actions on runs ------------------------------------------------------------------------

BULK_ACTIONS = {
    "cancel": (
        "operator",
        lambda actor, run_id: run_services.run_cancel(actor=actor, run_id=run_id, force=False),
    ),
    "rerun-failed": (
        "operator",
        lambda actor, run_id: run_services.run_rerun(
            actor=actor, run_id=run_id, failed_only=True, reset_params=False, from_task=None
        ),
    ),
    "delete": ("admin", lambda actor, run_id: run_services.run_delete(actor=actor, run_id=run_id)),
}


def _bulk_question(action: str, count: int) -> str:
    questions = {
        "cancel": ngettext("Cancel %(count)d run?", "Cancel %(count)d runs?", count),
        "rerun-failed": ngettext(
            "Rerun the failed tasks of %(count)d run?", "Rerun the failed tasks of %(count)d runs?", count
        ),
        "delete": ngettext(
            "Delete %(count)d run with its task runs and output? This cannot be undone.",
            "Delete %(count)d runs with their task runs and output? This cannot be undone.",
            count,
        ),
    }
    return questions[action] % {"count": count}


def _bulk_done(action: str, count: int) -> str:
    done = {
        "cancel": ngettext("%(count)d run cancelled.", "%(count)d runs cancelled.", count),
        "rerun-failed": ngettext("%(count)d rerun started.", "%(count)d reruns started.", count),
        "delete": ngettext("%(count)d run deleted.", "%(count)d runs deleted.", count),
    }
    return done[action] % {"count": count}


def _back_to_list(request: HttpRequest) -> str:
    target = request.POST.get("next") or reverse("console:runs")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return reverse("console:runs")
    return target


@console_page("operator")
@require_POST
def run_bulk_page(request: HttpRequest) -> HttpResponseBase:
    """Selected runs of the list: a confirmation naming how many, then the action on each, run by
    run (one refused run does not stop the others; each refusal is reported)."""
    action = request.POST.get("action", "")
    if action not in BULK_ACTIONS:
        raise errors.ValidationFailed(_("Choose an action for the selected runs."), field="action")
    role, act = BULK_ACTIONS[action]
    if not principal_of(request).has_role(role):
        raise errors.PermissionDenied(_("Requires the %(role)s role.") % {"role": role})
    run_ids = list(dict.fromkeys(request.POST.getlist("run")))[:100]
    if not run_ids:
        messages.warning(request, _("Select at least one run first."))
        return redirect(_back_to_list(request))
    if request.POST.get("confirmed") != "yes":
        context = {
            "action": action,
            "run_ids": run_ids,
            "question": _bulk_question(action, len(run_ids)),
            "next": _back_to_list(request),
        }
        return page(request, "orch_console/bulk_confirm.html", context)
    actor, done = request.user.get_username(), 0
    for run_id in run_ids:
        try:
            act(actor, run_id)
            done += 1
        except errors.ApplicationError as exc:
            messages.warning(request, f"{run_id}: {exc.message}")
    messages.success(request, _bulk_done(action, done))
    return redirect(_back_to_list(request))


# Grid ----------------------------------------------------------------------------------------


@console_page()
def grid_page(request: HttpRequest) -> HttpResponseBase:
    """Recent runs of a DAG by task; without a DAG, the DAGs to choose from."""
    dag_id = request.GET.get("dag_id", "")
    dag_ids = list(definition_selectors.dag_list().values_list("id", flat=True)[:500])
    context: dict[str, Any] = {"dag_id": dag_id, "dag_ids": dag_ids}
    if dag_id:
        definition_selectors.get_or_404(Dag, dag_id, "DAG")
        context["grid"] = grid.build(dag_id, _stable)
    return page(
        request, "orch_console/_grid.html" if _part(request, "grid") else "orch_console/grid.html", context
    )


# Agents and queues ---------------------------------------------------------------------------


@console_page()
def agent_list_page(request: HttpRequest) -> HttpResponseBase:
    agents = list(agent_selectors.agent_list())
    live = set(agent_selectors.live_agents().values_list("agent_id", flat=True))
    running = agent_selectors.running_task_runs_by_agent([a.agent_id for a in agents])
    rows = [{"agent": a, "live": a.agent_id in live, "running": running.get(a.agent_id, [])} for a in agents]
    template = "orch_console/_agents_table.html" if _part(request, "table") else "orch_console/agents.html"
    return page(request, template, {"rows": rows, "retire_seconds": settings.AGENT_RETIRE_SECONDS})


@console_page("operator")
@require_POST
def agent_retire_page(request: HttpRequest, agent_id: str) -> HttpResponseBase:
    agent_services.agent_retire(actor=request.user.get_username(), agent_id=agent_id)
    messages.success(request, _("Agent %(agent)s retired.") % {"agent": agent_id})
    return redirect("console:agents")


@console_page()
def queue_list_page(request: HttpRequest) -> HttpResponseBase:
    return page(request, "orch_console/queues.html", {"queues": agent_selectors.queue_overview()})


@console_page("admin")
@require_POST
def queue_purge_page(request: HttpRequest, queue_name: str) -> HttpResponseBase:
    removed = run_services.queue_purge(actor=request.user.get_username(), queue=queue_name)
    messages.success(
        request, _("Queue %(queue)s purged (%(count)d task runs).") % {"queue": queue_name, "count": removed}
    )
    return page(request, "orch_console/queues.html", {"queues": agent_selectors.queue_overview()})


# Preferences ---------------------------------------------------------------------------------


@console_page()
@require_http_methods(["GET", "POST"])
def preferences_page(request: HttpRequest) -> HttpResponseBase:
    """Time zone, theme and language; saved in the session."""
    if request.method == "POST":
        posted = {k: str(request.POST.get(k, "")) for k in preferences.DEFAULTS}
        found = preferences.problems(posted)
        if not found:
            preferences.save(request, posted)
            messages.success(request, _("Preferences saved."))
            return redirect("console:preferences")
        context: dict[str, Any] = {"prefs": posted, "field_errors": found}
    else:
        context = {"prefs": preferences.preferences_of(request), "field_errors": {}}
    context.update(
        time_zones=preferences.time_zones(), themes=preferences.THEMES, languages=preferences.LANGUAGES
    )
    return page(
        request, "orch_console/preferences.html", context, status=400 if context["field_errors"] else 200
    )
