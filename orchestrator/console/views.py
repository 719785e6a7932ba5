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
from django.contrib.auth import authenticate, login, logout
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST

from orchestrator.agents import selectors as agent_selectors
from orchestrator.console import forms
from shared.web.graph import Node, layout
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

View = Callable[..., HttpResponseBase]
PAGE_SIZE = 25
LOG_LINES_ON_PAGE = 5000  # the rest arrives through the follower


def principal_of(request: HttpRequest) -> Principal:
    return principal_from_session_user(request.user)  # type: ignore[arg-type]


def page(request: HttpRequest, template: str, context: dict[str, Any], status: int = 200) -> HttpResponse:
    base: dict[str, Any] = {"oidc_enabled": settings.OIDC_ENABLED}
    if request.user.is_authenticated:
        principal = principal_of(request)
        base.update(
            role=principal.role,
            can_operate=principal.has_role("operator"),
            can_admin=principal.has_role("admin"),
        )
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
            try:
                if not principal_of(request).has_role(role):
                    raise errors.PermissionDenied(f"Requires the {role} role.")
                return view(request, *args, **kwargs)
            except errors.ApplicationError as exc:
                return page(
                    request, "orch_console/error.html", {"message": exc.message}, status=exc.status_code
                )

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
        context = {"next": target, "error": "Invalid username or password."}
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


def _paged(request: HttpRequest, queryset: Any) -> tuple[list[Any], dict[str, Any]]:
    paging = _paging(request, queryset.count())
    return list(queryset[paging.pop("slice")]), paging


# Definitions ---------------------------------------------------------------------------------


@console_page()
def dag_list_page(request: HttpRequest) -> HttpResponseBase:
    filters = DagListApi.FilterSerializer(data=request.GET)
    filters.is_valid(raise_exception=True)
    dags, paging = _paged(request, definition_selectors.dag_list(**filters.validated_data))
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
        run, _ = run_services.run_schedule_task(
            actor=actor, task_id=task_id, options=options, queue=body.get("queue")
        )
        return run

    try:
        run = _schedule(request, context["fields"], schedule)
    except errors.ValidationFailed as exc:
        return _schedule_refused(request, "orch_console/task.html", context, exc)
    return redirect("console:run", run_id=run.run_id)


# Runs ----------------------------------------------------------------------------------------


@console_page()
def run_list_page(request: HttpRequest) -> HttpResponseBase:
    filters = {name: request.GET[name] for name in ("status", "dag_id") if request.GET.get(name)}
    parsed = RunListApi.FilterSerializer(data=filters)
    parsed.is_valid(raise_exception=True)
    runs, paging = _paged(request, run_selectors.run_list(**parsed.validated_data))
    run_selectors.with_counts(runs)
    context = {"runs": runs, "paging": paging, "statuses": RUN_STATUSES, "filters": filters}
    return page(request, "orch_console/runs.html", context)


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
    task_runs = run_selectors.task_runs_of(run)
    return {
        "run": run,
        "task_runs": task_runs,
        "graph": _run_graph(run, task_runs),
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
    return redirect("console:run", run_id=run_id)


@console_page("operator")
@require_POST
def run_pause_page(request: HttpRequest, run_id: str) -> HttpResponseBase:
    run_services.run_pause(actor=request.user.get_username(), run_id=run_id)
    return redirect("console:run", run_id=run_id)


@console_page("operator")
@require_POST
def run_resume_page(request: HttpRequest, run_id: str) -> HttpResponseBase:
    run_services.run_resume(actor=request.user.get_username(), run_id=run_id)
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
    }
    return page(request, "orch_console/task_run.html", context)


# Agents and queues ---------------------------------------------------------------------------


@console_page()
def agent_list_page(request: HttpRequest) -> HttpResponseBase:
    agents = list(agent_selectors.agent_list())
    live = set(agent_selectors.live_agents().values_list("agent_id", flat=True))
    running = agent_selectors.running_task_runs_by_agent([a.agent_id for a in agents])
    rows = [{"agent": a, "live": a.agent_id in live, "running": running.get(a.agent_id, [])} for a in agents]
    return page(request, "orch_console/agents.html", {"rows": rows})


@console_page()
def queue_list_page(request: HttpRequest) -> HttpResponseBase:
    return page(request, "orch_console/queues.html", {"queues": agent_selectors.queue_overview()})


@console_page("admin")
@require_POST
def queue_purge_page(request: HttpRequest, queue_name: str) -> HttpResponseBase:
    removed = run_services.queue_purge(actor=request.user.get_username(), queue=queue_name)
    context = {"queues": agent_selectors.queue_overview(), "purged": (queue_name, removed)}
    return page(request, "orch_console/queues.html", context)
