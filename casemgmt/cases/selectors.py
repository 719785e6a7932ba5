"""Reads for case types and cases: tenant-scoped access, listing, search and the dashboard."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from uuid import UUID

from django.db import connection
from django.db.models import (
    Avg,
    Count,
    DateTimeField,
    DurationField,
    ExpressionWrapper,
    F,
    Func,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
)
from django.http import QueryDict
from django.utils import timezone

from casemgmt.cases.models import Case, CaseType
from casemgmt.workflows.models import CaseStep
from shared.api.errors import NotFound, ValidationFailed
from shared.api.pagination import Page
from shared.api.time import parse_iso

if TYPE_CHECKING:
    from casemgmt.accounts.models import User

SORT_FIELDS = {"createdAt": "created_at", "deadline": "sla_deadline", "status": "status"}
STATUSES = [s for s, _ in Case.STATUSES]


def _uuid(raw: Any, field: str) -> UUID:
    try:
        return UUID(str(raw))
    except (TypeError, ValueError):
        raise ValidationFailed(f"{field} must be a UUID", field=field) from None


# --- case types -------------------------------------------------------------------------------


def case_type_list(*, tenant_id: Any, key: str | None = None, latest: bool = False) -> QuerySet[CaseType]:
    types = CaseType.objects.filter(tenant_id=tenant_id)
    if key:
        types = types.filter(key=key)
    if latest:  # one row per key: its highest version
        newest = (
            CaseType.objects.filter(tenant_id=OuterRef("tenant_id"), key=OuterRef("key"))
            .order_by("-version")
            .values("version")[:1]
        )
        types = types.filter(version=Subquery(newest))
    return types.order_by("-created_at", "-id")  # newest first; id keeps ties stable


def case_type_get(*, tenant_id: Any, case_type_id: Any) -> CaseType:
    return _case_type_cached(str(tenant_id), str(case_type_id))


@lru_cache(maxsize=1024)
def _case_type_cached(tenant_id: str, case_type_id: str) -> CaseType:
    """A registered case type never changes (no update or delete path), so a process may keep it.
    Misses raise and are not cached."""
    case_type = CaseType.objects.filter(tenant_id=tenant_id, id=case_type_id).first()
    if case_type is None:  # another tenant's case type is reported as missing too
        raise NotFound("Case type not found.")
    return case_type


def case_type_latest(*, tenant_id: Any, key: str) -> CaseType:
    case_type = CaseType.objects.filter(tenant_id=tenant_id, key=key).order_by("-version").first()
    if case_type is None:
        raise NotFound(f"Case type '{key}' not found.")
    return case_type


# --- cases ------------------------------------------------------------------------------------


def access_case(*, user: User, case_id: Any) -> Case:
    """The case if it belongs to the caller's tenant; otherwise 404 (existence is never leaked)."""
    case = (
        Case.objects.select_related("case_type", "workflow_version")
        .filter(tenant_id=user.member_tenant_id, id=case_id)
        .first()
    )
    if case is None:
        raise NotFound("Case not found.")
    return case


def case_list(*, user: User, params: QueryDict) -> QuerySet[Case]:
    cases = Case.objects.filter(tenant_id=user.member_tenant_id).select_related("case_type")
    if params.get("caseTypeId"):
        cases = cases.filter(case_type_id=_uuid(params["caseTypeId"], "caseTypeId"))
    status = params.get("status")
    if status:
        if status not in STATUSES:
            raise ValidationFailed(f"status must be one of {', '.join(STATUSES)}", field="status")
        cases = cases.filter(status=status)
    created_after = parse_iso(params.get("createdAfter"), "createdAfter")
    created_before = parse_iso(params.get("createdBefore"), "createdBefore")
    if created_after:
        cases = cases.filter(created_at__gte=created_after)
    if created_before:
        cases = cases.filter(created_at__lt=created_before)
    if params.get("assignedTo"):
        assignee = user.id if params["assignedTo"] == "me" else _uuid(params["assignedTo"], "assignedTo")
        # Decision: "assigned to" means holding an active human task of the case.
        cases = cases.filter(
            id__in=CaseStep.objects.filter(
                tenant_id=user.member_tenant_id, type="task", status=CaseStep.ACTIVE, assigned_to_id=assignee
            ).values("case_id")
        )
    return cases.order_by(*_ordering(params))


def _ordering(params: QueryDict) -> list[Any]:
    sort_by = params.get("sortBy") or "createdAt"
    if sort_by not in SORT_FIELDS:
        raise ValidationFailed(f"sortBy must be one of {', '.join(SORT_FIELDS)}", field="sortBy")
    order = params.get("order") or "desc"
    if order not in ("asc", "desc"):
        raise ValidationFailed("order must be asc or desc", field="order")
    field = F(SORT_FIELDS[sort_by])
    primary = field.asc(nulls_last=True) if order == "asc" else field.desc(nulls_last=True)
    tiebreak = "created_at" if order == "asc" else "-created_at"
    return [primary, tiebreak, "id"]


def current_steps(case_ids: list[Any]) -> dict[Any, str]:
    """`currentStep` for a page of list items in one query: the name of each case's first
    active step by position."""
    names: dict[Any, str] = {}
    rows = (
        CaseStep.objects.filter(case_id__in=case_ids, status=CaseStep.ACTIVE)
        .order_by("case_id", "position")
        .values_list("case_id", "name")
    )
    for case_id, name in rows:
        names.setdefault(case_id, name)
    return names


# --- search -----------------------------------------------------------------------------------


@dataclass
class SearchHit:
    id: Any
    display_name: str
    case_type_id: Any
    case_number: str
    relevance: float
    excerpt: str


HEADLINE_OPTIONS = 'StartSel=**, StopSel=**, MaxWords=25, MinWords=8, MaxFragments=2, FragmentDelimiter=" … "'

PG_SEARCH = f"""
WITH q AS (SELECT websearch_to_tsquery('english', %(q)s) AS query),
hits AS (
  SELECT c.id, c.display_name, c.case_type_id, c.case_number, c.search_text, c.created_at,
         ts_rank_cd(c.search_vector, q.query) AS relevance, count(*) OVER () AS total
  FROM cases_case c, q
  WHERE c.tenant_id = %(tenant)s AND c.search_vector @@ q.query
  ORDER BY relevance DESC, c.created_at DESC, c.id DESC
  LIMIT %(limit)s OFFSET %(offset)s
)
SELECT hits.id, hits.display_name, hits.case_type_id, hits.case_number, hits.relevance, hits.total,
       ts_headline('english', hits.search_text, q.query, '{HEADLINE_OPTIONS}') AS excerpt
FROM hits, q
ORDER BY hits.relevance DESC, hits.created_at DESC, hits.id DESC
"""


def case_search(*, tenant_id: Any, q: str, page: Page) -> tuple[list[SearchHit], int]:
    if connection.vendor == "postgresql":
        return _search_postgresql(tenant_id, q, page)
    return _search_fallback(tenant_id, q, page)


def _search_postgresql(tenant_id: Any, q: str, page: Page) -> tuple[list[SearchHit], int]:
    # Ranking runs over the GIN-index matches; ts_headline (costly) only over the page's rows.
    params: dict[str, str | int] = {
        "q": q,
        "tenant": str(tenant_id),
        "limit": page.limit,
        "offset": page.offset,
    }
    with connection.cursor() as cursor:
        cursor.execute(PG_SEARCH, params)
        rows = cursor.fetchall()
    hits = [SearchHit(r[0], r[1], r[2], r[3], round(float(r[4]), 6), r[6]) for r in rows]
    total = int(rows[0][5]) if rows else _pg_count(tenant_id, q) if page.offset else 0
    return hits, total


def _pg_count(tenant_id: Any, q: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM cases_case WHERE tenant_id = %s AND search_vector @@ websearch_to_tsquery('english', %s)",
            [str(tenant_id), q],
        )
        return int(cursor.fetchone()[0])


def _search_fallback(tenant_id: Any, q: str, page: Page) -> tuple[list[SearchHit], int]:
    """Without a full-text index (SQLite): every word must occur in the case's text, in any letter
    case (a substring, so "flood" also finds "flooded"); double quotes only delimit words; relevance
    counts occurrences. SQLite's LIKE folds ASCII letters only, so it narrows the candidates by the
    ASCII words and Python decides on every word."""
    terms = [t.lower() for t in re.findall(r'[^\s"]+', q)]
    if not terms:  # only quotes: no word to look for, as the full-text query has none either
        return [], 0
    cases = Case.objects.filter(tenant_id=tenant_id)
    for term in (t for t in terms if t.isascii()):
        cases = cases.filter(search_text__icontains=term)
    candidates = cases.only("id", "display_name", "case_type_id", "case_number", "search_text", "created_at")
    found = [case for case in candidates if all(t in case.search_text.lower() for t in terms)]
    total = len(found)
    scored = []
    for case in found:
        text = case.search_text.lower()
        scored.append((sum(text.count(t.lower()) for t in terms), case))
    # Most relevant first; ties newest first, then by id (descending) so pages never overlap.
    scored.sort(key=lambda item: (item[0], item[1].created_at, str(item[1].id)), reverse=True)
    window = scored[page.offset : page.offset + page.limit]
    return [
        SearchHit(
            c.id, c.display_name, c.case_type_id, c.case_number, float(score), _excerpt(c.search_text, terms)
        )
        for score, c in window
    ], total


def _excerpt(text: str, terms: list[str], width: int = 60) -> str:
    lowered = text.lower()
    positions = [(lowered.find(t.lower()), t) for t in terms if lowered.find(t.lower()) >= 0]
    if not positions:
        return text[: width * 2]
    start, term = min(positions)
    snippet = text[max(0, start - width) : start + len(term) + width].replace("\n", " ")
    return re.sub(re.escape(term), lambda m: f"**{m.group(0)}**", snippet, flags=re.IGNORECASE)


# --- dashboard --------------------------------------------------------------------------------

WEEK_SECONDS = 7 * 24 * 3600


class AgeInWeeks(Func):
    """Whole weeks between `now` and a timestamp column, computed by the database."""

    output_field = IntegerField()

    def __init__(self, field: str, now: Any) -> None:
        super().__init__(Value(now, output_field=DateTimeField()), F(field))

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        template = f"FLOOR(EXTRACT(EPOCH FROM (%(expressions)s)) / {WEEK_SECONDS})::integer"
        return self.as_sql(compiler, connection, template=template, arg_joiner=" - ", **extra)

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        template = "CAST((julianday(%(expressions)s)) / 7 AS INTEGER)"
        return self.as_sql(compiler, connection, template=template, arg_joiner=") - julianday(", **extra)


@dataclass
class Dashboard:
    by_status: dict[str, int]
    by_type: dict[str, int]
    avg_resolution_seconds: float
    sla_compliance_rate: float
    active_by_age_in_weeks: list[int]  # index = age in whole weeks


def case_dashboard(*, tenant_id: Any) -> Dashboard:
    cases = Case.objects.filter(tenant_id=tenant_id).order_by()
    now = timezone.now()
    by_status = {status: 0 for status in STATUSES}
    by_status.update(dict(cases.values("status").annotate(n=Count("id")).values_list("status", "n")))
    by_type = dict(cases.values("case_type__key").annotate(n=Count("id")).values_list("case_type__key", "n"))
    duration = ExpressionWrapper(F("closed_at") - F("created_at"), output_field=DurationField())
    stats = cases.aggregate(
        avg_resolution=Avg(duration, filter=Q(status=Case.CLOSED)),
        # Decision: SLA measured over closed cases with a deadline (met when closed in time) plus
        # active cases already past their deadline (breached); cancelled cases are not counted.
        sla_met=Count(
            "id", filter=Q(status=Case.CLOSED, sla_deadline__isnull=False, closed_at__lte=F("sla_deadline"))
        ),
        sla_measured=Count(
            "id",
            filter=Q(status=Case.CLOSED, sla_deadline__isnull=False)
            | Q(status=Case.ACTIVE, sla_deadline__lt=now),
        ),
    )
    ages = dict(
        cases.filter(status=Case.ACTIVE)
        .annotate(week=AgeInWeeks("created_at", now))
        .values("week")
        .annotate(n=Count("id"))
        .values_list("week", "n")
    )
    avg = stats["avg_resolution"]
    return Dashboard(
        by_status=by_status,
        by_type=by_type,
        avg_resolution_seconds=round(avg.total_seconds(), 3) if avg is not None else 0.0,
        sla_compliance_rate=round(stats["sla_met"] / stats["sla_measured"], 4)
        if stats["sla_measured"]
        else 1.0,
        active_by_age_in_weeks=[ages.get(week, 0) for week in range(max(ages, default=-1) + 1)],
    )
