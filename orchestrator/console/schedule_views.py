"""Schedule pages: the list with each schedule's next fire time, a schedule with its next five fire
times and the runs it made, the create and edit form (with a preview of the next five fire times in
the chosen zone while the cron expression is typed), pause, resume and delete. Roles as in the API:
viewers read, operators pause and resume, admins create, edit and delete. The form is read by the
API's own serializer and written by the API's services (audited under the user's name)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, QueryDict
from django.http.response import HttpResponseBase
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from orchestrator.console import forms, preferences
from orchestrator.console.views import _paged, console_page, page
from orchestrator.definitions import selectors as definition_selectors
from orchestrator.definitions.models import Context
from orchestrator.runs import selectors as run_selectors
from orchestrator.schedules import selectors, services
from orchestrator.schedules.apis import ScheduleDetailApi, ScheduleListCreateApi
from orchestrator.schedules.models import CATCHUP_POLICIES, Schedule
from orchestrator.schedules.timing import BadTiming, check_cron, zone
from shared.api.handler import field_errors
from shared.api.time import now_ms

RUNS_SHOWN = 25


def _with_next(schedules: list[Schedule]) -> list[dict[str, Any]]:
    """Each schedule with its next fire time (paused or not), or None when none is left."""
    rows = []
    for schedule in schedules:
        upcoming = selectors.next_fire_times(schedule)
        rows.append({"schedule": schedule, "next_time": upcoming[0] if upcoming else None})
    return rows


@console_page()
def schedule_list_page(request: HttpRequest) -> HttpResponseBase:
    filters = ScheduleListCreateApi.FilterSerializer(data=request.GET)
    filters.is_valid(raise_exception=True)
    schedules, paging = _paged(request, selectors.schedule_list(**filters.validated_data))
    given = {k: request.GET[k] for k in ("dag_id", "task_id", "paused") if request.GET.get(k)}
    context = {"rows": _with_next(schedules), "paging": paging, "filters": given}
    return page(request, "orch_console/schedules.html", context)


@console_page()
def schedule_page(request: HttpRequest, schedule_id: str) -> HttpResponseBase:
    schedule = selectors.schedule_get(schedule_id=schedule_id)
    runs = list(run_selectors.run_list(schedule_id=schedule_id)[:RUNS_SHOWN])
    run_selectors.with_counts(runs)
    context = {
        "schedule": schedule,
        "upcoming": selectors.next_fire_times(schedule),
        "runs": runs,
        "runs_total": run_selectors.run_list(schedule_id=schedule_id).count(),
    }
    return page(request, "orch_console/schedule.html", context)


# The form ------------------------------------------------------------------------------------


def _choices() -> dict[str, Any]:
    return {
        "dag_ids": list(definition_selectors.dag_list().values_list("id", flat=True)[:500]),
        "task_ids": list(definition_selectors.task_list().values_list("id", flat=True)[:500]),
        "contexts": list(Context.objects.order_by("id").values_list("id", flat=True)),
        "catchups": CATCHUP_POLICIES,
        "time_zones": preferences.time_zones(),
    }


def _initial(schedule: Schedule | None) -> dict[str, Any]:
    if schedule is None:
        return {"timing": "cron", "cron": "0 * * * *", "timezone": timezone.get_current_timezone_name(),
                "catchup": "latest", "max_catchup": 10, "priority": 0}  # fmt: skip
    local = zone(schedule.timezone)
    return {
        "target": f"dag:{schedule.dag_id}" if schedule.dag_id else f"task:{schedule.task_id}",
        "timing": "cron" if schedule.cron else "interval",
        "cron": schedule.cron or "",
        "interval_seconds": schedule.interval_seconds or "",
        "timezone": schedule.timezone,
        "parameters": "\n".join(f"{k}={v}" for k, v in schedule.parameters.items()),
        "context": schedule.context or "",
        "catchup": schedule.catchup,
        "max_catchup": schedule.max_catchup,
        "priority": schedule.priority,
        "paused": schedule.paused,
        # datetime-local inputs: wall-clock times in the schedule's zone
        "start_date": schedule.start_date.astimezone(local).strftime("%Y-%m-%dT%H:%M") if schedule.start_date else "",
        "end_date": schedule.end_date.astimezone(local).strftime("%Y-%m-%dT%H:%M") if schedule.end_date else "",
    }  # fmt: skip


def _body(post: QueryDict, problems: list[dict[str, str]]) -> dict[str, Any]:
    """The API's body for the submitted form; empty inputs are left out (the API's defaults)."""
    kind, _sep, target = str(post.get("target", "")).partition(":")
    body: dict[str, Any] = {}
    if kind in ("dag", "task") and target:
        body[f"{kind}_id"] = target
    else:
        problems.append({"field": "target", "error": _("Choose the DAG or task the schedule runs.")})
    if post.get("timing") == "interval":
        body["interval_seconds"] = str(post.get("interval_seconds", "")).strip() or None
    else:
        body["cron"] = str(post.get("cron", "")).strip() or None
    body["parameters"] = forms.extra_parameters(str(post.get("parameters", "")), problems, field="parameters")
    for name in ("id", "timezone", "context", "catchup", "max_catchup", "priority", "start_date", "end_date"):
        value = str(post.get(name, "")).strip()
        if value:
            body[name] = value
    body["paused"] = post.get("paused") == "on"
    return body


def _read_form(request: HttpRequest, serializer_class: type) -> tuple[Any, dict[str, str]]:
    """The serializer (valid or not) and the messages by field. Dates without a zone are read in
    the schedule's zone, as the form says."""
    problems: list[dict[str, str]] = []
    body = _body(request.POST, problems)
    try:
        tz = zone(body.get("timezone", "UTC"))
    except BadTiming:
        tz = zone("UTC")  # the serializer reports the zone
    with timezone.override(tz):
        serializer = serializer_class(data=body)
        valid = serializer.is_valid()
    if not valid:
        problems.extend(field_errors(serializer.errors))
    found: dict[str, str] = {}
    for item in problems:
        name = (item.get("field") or "form").split(".")[0]
        name = {"dag_id": "target", "task_id": "target", "interval_seconds": "timing_value", "cron": "timing_value"}.get(name, name)  # fmt: skip
        found[name] = (found.get(name, "") + " " + item["error"]).strip()
    return serializer, found


def _form_page(request: HttpRequest, schedule: Schedule | None, values: dict[str, Any], found: dict[str, str]) -> HttpResponseBase:  # fmt: skip
    context = {
        "schedule": schedule,
        "values": values,
        "field_errors": found,
        "preview": _preview(values),
        **_choices(),
    }
    return page(request, "orch_console/schedule_form.html", context, status=400 if found else 200)


@console_page("admin")
@require_http_methods(["GET", "POST"])
def schedule_create_page(request: HttpRequest) -> HttpResponseBase:
    if request.method == "GET":
        values = _initial(None)
        if request.GET.get("target"):
            values["target"] = request.GET["target"]
        return _form_page(request, None, values, {})
    serializer, found = _read_form(request, ScheduleListCreateApi.InputSerializer)
    if found:
        return _form_page(request, None, request.POST.dict(), found)
    schedule = services.schedule_create(
        actor=request.user.get_username(),
        schedule_id=serializer.validated_data.get("id"),
        spec=serializer.spec(),
    )
    messages.success(request, _("Schedule %(id)s created.") % {"id": schedule.id})
    return redirect("console:schedule", schedule_id=schedule.id)


@console_page("admin")
@require_http_methods(["GET", "POST"])
def schedule_edit_page(request: HttpRequest, schedule_id: str) -> HttpResponseBase:
    schedule = selectors.schedule_get(schedule_id=schedule_id)
    if request.method == "GET":
        return _form_page(request, schedule, _initial(schedule), {})
    serializer, found = _read_form(request, ScheduleDetailApi.InputSerializer)
    if found:
        return _form_page(request, schedule, request.POST.dict(), found)
    services.schedule_update(
        actor=request.user.get_username(), schedule_id=schedule_id, spec=serializer.spec()
    )
    messages.success(request, _("Schedule %(id)s saved.") % {"id": schedule_id})
    return redirect("console:schedule", schedule_id=schedule_id)


# The preview ---------------------------------------------------------------------------------


def _preview(values: Any) -> dict[str, Any]:
    """The next five fire times of what the form says, in the chosen zone, or why there are none."""
    zone_name = str(values.get("timezone") or "UTC")
    try:
        tz = zone(zone_name)
        draft = Schedule(timezone=zone_name, created_at=now_ms())
        if values.get("timing") == "interval":
            raw = str(values.get("interval_seconds") or "").strip()
            if not raw.isdigit() or int(raw) < 1:
                return {"error": _("Enter a whole number of seconds of at least 1.")}
            draft.interval_seconds = int(raw)
        else:
            draft.cron = str(values.get("cron") or "").strip()
            check_cron(draft.cron, tz)
    except BadTiming as exc:
        return {"error": str(exc)}
    return {"zone": zone_name, "times": selectors.next_fire_times(draft)}


@console_page()
def schedule_preview_page(request: HttpRequest) -> HttpResponseBase:
    """The form's preview fragment, asked for as the user types."""
    return page(request, "orch_console/_schedule_preview.html", {"preview": _preview(request.GET)})


# Pause, resume, delete -----------------------------------------------------------------------


@console_page("operator")
@require_POST
def schedule_pause_page(request: HttpRequest, schedule_id: str) -> HttpResponseBase:
    paused = request.POST.get("paused") != "false"
    services.schedule_set_paused(actor=request.user.get_username(), schedule_id=schedule_id, paused=paused)
    text = _("Schedule %(id)s paused.") if paused else _("Schedule %(id)s resumed.")
    messages.success(request, text % {"id": schedule_id})
    if request.POST.get("next") == "list":
        return redirect("console:schedules")
    return redirect("console:schedule", schedule_id=schedule_id)


@console_page("admin")
@require_POST
def schedule_delete_page(request: HttpRequest, schedule_id: str) -> HttpResponseBase:
    services.schedule_delete(actor=request.user.get_username(), schedule_id=schedule_id)
    messages.success(request, _("Schedule %(id)s deleted; the runs it made stay.") % {"id": schedule_id})
    return redirect("console:schedules")
