"""Console pages about the signed-in user's view of the tenant: the dashboard and preferences."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import QueryDict
from django.http.response import HttpResponseBase
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from casemgmt.accounts.apis import PreferencesApi
from casemgmt.accounts.selectors import preferences_of
from casemgmt.accounts.services import preferences_update
from casemgmt.cases.selectors import case_dashboard, case_type_list
from casemgmt.console.teams_context import out_of_office_context
from casemgmt.console.views import ConsoleRequest, console_page, page
from casemgmt.tenancy.selectors import theme_list
from shared.web.templatetags.design import status_label
from shared.web.zones import pickable_zones


def _chart(axis: str, labels: list[Any], values: list[int]) -> dict[str, Any]:
    return {"axis": axis, "labels": [str(label) for label in labels], "values": values}


@console_page("cases:read", "reports:read")
def dashboard_page(request: ConsoleRequest) -> HttpResponseBase:
    """The case dashboard's figures (as `GET /cases/dashboard`), drawn by Chart.js; each chart
    also has its numbers as a table for screen readers and for printing."""
    tenant_id = request.user.member_tenant_id
    dashboard = case_dashboard(tenant_id=tenant_id, teams=request.user.rls_teams)
    ages = dashboard.active_by_age_in_weeks
    # The type chart's axis names case types as people know them, not by key.
    type_names = dict(case_type_list(tenant_id=tenant_id, latest=True).values_list("key", "display_name"))
    charts = {
        "status": _chart(
            _("Status"), [status_label(s) for s in dashboard.by_status], list(dashboard.by_status.values())
        ),
        "type": _chart(
            _("Type"), [type_names.get(k) or k for k in dashboard.by_type], list(dashboard.by_type.values())
        ),
        "ageing": _chart(_("Age in weeks"), list(range(len(ages))), ages),
    }
    titles = {"status": _("By status"), "type": _("By type"), "ageing": _("Active, by age in weeks")}
    chart_list = [
        (key, titles[key], {**chart, "rows": list(zip(chart["labels"], chart["values"], strict=True))})
        for key, chart in charts.items()
    ]
    # Resolution time and SLA compliance are about closed cases: with none, there is no figure.
    context = {
        "dashboard": dashboard,
        "charts": charts,
        "chart_list": chart_list,
        "any_closed": bool(dashboard.by_status.get("closed")),
    }
    return page(request, "console/dashboard.html", context)


def _submitted(posted: QueryDict) -> dict[str, Any]:
    """The form as the API's body: a checkbox is a boolean, a number field an integer when it
    parses (otherwise the text, which the API's rules reject with their own message)."""
    data: dict[str, Any] = {k: posted[k] for k in ("theme", "language", "timezone") if k in posted}
    if "itemsPerPage" in posted:
        raw = str(posted.get("itemsPerPage", "")).strip()
        data["itemsPerPage"] = int(raw) if raw.lstrip("-").isdigit() else raw
    data["emailNotifications"] = posted.get("emailNotifications") == "on"
    return data


def _choices(user_language: str) -> dict[str, Any]:
    languages = sorted(settings.LANGUAGES, key=lambda pair: str(pair[1]))
    if user_language.lower() not in {code for code, _ in languages}:
        languages.insert(0, (user_language, user_language))
    return {"languages": languages, "timezones": pickable_zones()}


@console_page()
@require_http_methods(["GET", "POST"])
def preferences_page(request: ConsoleRequest) -> HttpResponseBase:
    """The same preferences as `/auth/preferences`, validated by the API's own rules; the theme
    and language apply to every console page."""
    user = request.user
    themes = theme_list(tenant_id=user.member_tenant_id)
    current = preferences_of(user)
    status, field_errors = 200, {}
    if request.method == "POST":
        data = PreferencesApi.InputSerializer(
            data=_submitted(request.POST), partial=True, context={"tenant_id": user.tenant_id}
        )
        if data.is_valid():
            preferences_update(user=user, changes=dict(data.validated_data))
            return redirect(f"{reverse('console:preferences')}?saved=1")
        status, field_errors = 400, {k: " ".join(str(m) for m in v) for k, v in data.errors.items()}
        current = {**current, **_submitted(request.POST)}
    context = {
        "themes": themes,
        "prefs": current,
        "field_errors": field_errors,
        "saved": request.GET.get("saved") == "1" and status == 200,
        **_choices(str(current["language"])),
        **out_of_office_context(user),
    }
    return page(request, "console/preferences.html", context, status=status)
