"""Reads for reports: saved reports, and the summary and SLA figures, aggregated by the database."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from django.db.models import (
    Avg,
    Count,
    DateTimeField,
    DurationField,
    ExpressionWrapper,
    F,
    Q,
    QuerySet,
    Value,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from casemgmt.cases.models import Case
from casemgmt.cases.selectors import teams_q
from casemgmt.reports.models import Report
from shared.api.errors import NotFound, ValidationFailed
from shared.api.pagination import Page

DEFAULT_PERIOD = timedelta(days=30)

# A case counts towards SLA compliance when it was closed with a deadline (on time when closed by
# it) or is still active past its deadline (breached). Cancelled cases and cases still within
# their deadline are not measured. The same rule drives the dashboards.
CLOSED_WITH_DEADLINE = Q(status=Case.CLOSED, sla_deadline__isnull=False)
ON_TIME = CLOSED_WITH_DEADLINE & Q(closed_at__lte=F("sla_deadline"))


def _breached(now: datetime) -> Q:
    return (CLOSED_WITH_DEADLINE & Q(closed_at__gt=F("sla_deadline"))) | Q(
        status=Case.ACTIVE, sla_deadline__lt=now
    )


# --- saved reports ----------------------------------------------------------------------------


def report_list(*, tenant_id: Any, page: Page) -> list[Report]:
    reports = Report.objects.filter(tenant_id=tenant_id).order_by("-created_at", "-id")  # newest first
    return list(reports[page.offset : page.offset + page.limit])


def report_get(*, tenant_id: Any, report_id: Any) -> Report:
    """The report if it belongs to the tenant; another tenant's report is missing too (404)."""
    report = Report.objects.filter(tenant_id=tenant_id, id=report_id).first()
    if report is None:
        raise NotFound("Report not found.")
    return report


# --- summary and SLA compliance ---------------------------------------------------------------


@dataclass(frozen=True)
class Period:
    start: datetime
    end: datetime


@dataclass(frozen=True)
class Summary:
    total: int
    by_status: dict[str, int]
    avg_resolution_seconds: float
    sla_compliance_rate: float


@dataclass(frozen=True)
class SlaCompliance:
    on_time: int
    breached: int
    compliance_rate: float
    avg_breach_seconds: float


def report_period(*, start: datetime | None, end: datetime | None) -> Period:
    """The cases created in [start, end); by default the 30 days up to now."""
    end = end or timezone.now()
    earliest = datetime.min.replace(tzinfo=UTC)
    start = start or (end - DEFAULT_PERIOD if end - earliest > DEFAULT_PERIOD else earliest)
    if start >= end:
        raise ValidationFailed("from must be before to", field="from")
    return Period(start=start, end=end)


def _cases(tenant_id: Any, teams: str, period: Period, case_type: str | None) -> QuerySet[Case]:
    """`teams` is the caller's `User.rls_teams`: on SQLite the accessTeams rule applies here, on
    PostgreSQL the `team_access` policy does."""
    cases = Case.objects.filter(
        teams_q(teams), tenant_id=tenant_id, created_at__gte=period.start, created_at__lt=period.end
    )
    if case_type:
        cases = cases.filter(_case_type_filter(case_type))
    return cases.order_by()


def _case_type_filter(case_type: str) -> Q:
    """`caseType` is a case type key (every version) or one version's id."""
    try:
        return Q(case_type_id=UUID(case_type))
    except ValueError:
        return Q(case_type__key=case_type)


def _rate(on_time: int, breached: int) -> float:
    # Nothing measured: nothing was late, so compliance is complete.
    return round(on_time / (on_time + breached), 4) if on_time + breached else 1.0


def _seconds(value: timedelta | None) -> float:
    return round(value.total_seconds(), 3) if value is not None else 0.0


def report_summary(*, tenant_id: Any, teams: str, period: Period, case_type: str | None = None) -> Summary:
    cases = _cases(tenant_id, teams, period, case_type)
    by_status = {status: 0 for status, _ in Case.STATUSES}
    by_status.update(dict(cases.values("status").annotate(n=Count("id")).values_list("status", "n")))
    resolution = ExpressionWrapper(F("closed_at") - F("created_at"), output_field=DurationField())
    stats = cases.aggregate(
        avg=Avg(resolution, filter=Q(status=Case.CLOSED)),
        on_time=Count("id", filter=ON_TIME),
        breached=Count("id", filter=_breached(timezone.now())),
    )
    return Summary(
        total=sum(by_status.values()),
        by_status=by_status,
        avg_resolution_seconds=_seconds(stats["avg"]),
        sla_compliance_rate=_rate(stats["on_time"], stats["breached"]),
    )


def report_sla_compliance(
    *, tenant_id: Any, teams: str, period: Period, case_type: str | None = None
) -> SlaCompliance:
    # A breach lasts from the deadline to the closing, or to now while the case is still open.
    now = timezone.now()
    overrun = ExpressionWrapper(
        Coalesce(F("closed_at"), Value(now, output_field=DateTimeField())) - F("sla_deadline"),
        output_field=DurationField(),
    )
    stats = _cases(tenant_id, teams, period, case_type).aggregate(
        on_time=Count("id", filter=ON_TIME),
        breached=Count("id", filter=_breached(now)),
        avg_breach=Avg(overrun, filter=_breached(now)),
    )
    return SlaCompliance(
        on_time=stats["on_time"],
        breached=stats["breached"],
        compliance_rate=_rate(stats["on_time"], stats["breached"]),
        avg_breach_seconds=_seconds(stats["avg_breach"]),
    )
