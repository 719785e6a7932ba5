"""Reads for case types and cases: tenant-scoped access, listing, search and the dashboard."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from datetime import datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple, cast
from uuid import UUID

from django.db import connection, transaction
from django.db.models import (
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
    Sum,
    Value,
)
from django.utils import timezone

from casemgmt.cases import hooks
from casemgmt.cases.models import Case, CaseType
from shared.api.errors import NotFound
from shared.api.pagination import EXACT_TOTAL_UP_TO, Page, list_total
from shared.api.time import iso
from shared.prepared import prepared_cursor

if TYPE_CHECKING:
    from casemgmt.accounts.models import User

SORT_FIELDS = {"created_at": "created_at", "deadline": "sla_deadline", "status": "status"}
NULLABLE_SORT_FIELDS = {"deadline"}
STATUSES = [s for s, _ in Case.STATUSES]


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


def team_access_q(user: User, prefix: str = "") -> Q:
    """accessTeams where the database cannot apply it: PostgreSQL's `team_access` policy hides a
    restricted case from non-members on every read; SQLite (`make run`) has no row-level security,
    so the detail, the case list, the inbox, a task read, search and the dashboard apply this filter
    instead (nothing on PostgreSQL). `prefix` leads from the queried model to the case (`case__`
    for steps)."""
    if connection.vendor == "postgresql":
        return Q()
    return teams_q(user.rls_teams, prefix)


def teams_q(teams: str, prefix: str = "") -> Q:
    """`team_access_q` for a principal's team ids as `User.rls_teams` gives them ("*" = every team)."""
    if connection.vendor == "postgresql" or teams == "*":
        return Q()
    visible = Q(**{f"{prefix}access_teams": ""})
    for team_id in filter(None, teams.split(",")):
        visible |= Q(**{f"{prefix}access_teams__contains": team_id})
    return visible


def access_case(*, user: User, case_id: Any) -> Case:
    """The case if it belongs to the caller's tenant; otherwise 404 (existence is never leaked)."""
    case = (
        Case.objects.select_related("case_type", "workflow_version")
        .filter(team_access_q(user), tenant_id=user.member_tenant_id, id=case_id)
        .first()
    )
    if case is None:
        raise NotFound("Case not found.")
    return case


@dataclass(frozen=True)
class CaseFilters:
    """What `case_list` filters and sorts by. `sort_by` is a key of `SORT_FIELDS`."""

    case_type_id: UUID | None = None
    status: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    assigned_to: UUID | None = None
    sort_by: str = "created_at"
    descending: bool = True


def case_list(
    *,
    user: User,
    case_type_id: UUID | None = None,
    status: str | None = None,
    created_after: datetime | None = None,
    created_before: datetime | None = None,
    assigned_to: UUID | None = None,
    sort_by: str = "created_at",
    descending: bool = True,
) -> QuerySet[Case]:
    """The tenant's cases created in [created_after, created_before), of a case type, a status,
    or with an active human task assigned to `assigned_to`."""
    f = CaseFilters(case_type_id, status, created_after, created_before, assigned_to, sort_by, descending)
    return _case_list(user, f)


def _case_list(user: User, f: CaseFilters) -> QuerySet[Case]:
    cases = Case.objects.filter(team_access_q(user), tenant_id=user.member_tenant_id).select_related(
        "case_type"
    )
    if f.case_type_id:
        cases = cases.filter(case_type_id=f.case_type_id)
    if f.status:
        cases = cases.filter(status=f.status)
    if f.created_after:
        cases = cases.filter(created_at__gte=f.created_after)
    if f.created_before:
        cases = cases.filter(created_at__lt=f.created_before)
    if f.assigned_to:  # holding an active human task of the case
        cases = cases.filter(id__in=hooks.workflows().assigned_case_ids(user.member_tenant_id, f.assigned_to))
    return cases.order_by(*_ordering(f))


def case_page(cases: QuerySet[Case], page: Page) -> list[Case]:
    """The page's cases plus one more (tells whether another page follows). The offset is walked
    over ids alone, so PostgreSQL skips rows inside the index (an index-only scan) and reads whole
    rows for this page only: a page half a million rows deep went from ~2 s to a fraction of that."""
    window = cases.values("id")[page.offset : page.offset + page.limit + 1]
    return list(cases.filter(id__in=window))


def _ordering(f: CaseFilters) -> list[Any]:
    sort_by, order = f.sort_by, "desc" if f.descending else "asc"
    field = F(SORT_FIELDS[sort_by])
    # NULLS LAST only where a NULL can occur: on a NOT NULL column it would still keep PostgreSQL
    # from reading an index backwards (DESC NULLS FIRST), and the first page would sort every row.
    nulls_last = True if sort_by in NULLABLE_SORT_FIELDS else None
    primary = field.asc(nulls_last=nulls_last) if order == "asc" else field.desc(nulls_last=nulls_last)
    tiebreak = "created_at" if order == "asc" else "-created_at"
    return [primary, tiebreak, "id"]


def current_steps(case_ids: list[Any]) -> dict[Any, str]:
    """`currentStep` for a page of list items in one query: the name of each case's first
    active step by position."""
    return hooks.workflows().current_steps(case_ids)


# --- the read and list endpoints: rows, not model instances --------------------------------------
#
# `GET /cases/{id}` and `GET /cases` are the hottest reads. Through the ORM, building their queries
# and turning rows into Case, CaseType and Workflow instances (each decoding its JSON: the case's
# data, the case type's schema, the workflow's definition) was most of their CPU, and a list took
# three queries. On PostgreSQL both run one hand-written statement reading only the columns the
# answer shows, with ids and timestamps already in the API's text form (`to_char` truncates to
# milliseconds as `shared.api.time.iso` does), so Python neither parses nor formats them. The ORM
# path (SQLite) returns the same rows. Filters, their validation and the order are those of
# `case_list`, so the list answers exactly as before.


class CaseRow(NamedTuple):
    """A case as its API representation shows it (see `cases.apis.case_out`): ids and timestamps
    as text, the data decoded."""

    id: str
    case_number: str
    display_name: str
    case_type_id: str
    case_type_key: str
    workflow_version_id: str | None
    status: str
    data: Any
    version: int
    created_at: str
    created_by_id: str | None
    updated_at: str
    sla_deadline: str | None
    closed_at: str | None
    outcome: str
    status_reason: str

    @classmethod
    def of(cls, case: Case) -> CaseRow:
        return cls(
            str(case.id), case.case_number, case.display_name, str(case.case_type_id), case.case_type.key,
            _text(case.workflow_version_id), case.status, case.data, case.version,
            cast(str, iso(case.created_at)), _text(case.created_by_id), cast(str, iso(case.updated_at)),
            iso(case.sla_deadline), iso(case.closed_at), case.outcome, case.status_reason,
        )  # fmt: skip


def _text(value: Any) -> str | None:
    return str(value) if value is not None else None


class StepRow(NamedTuple):
    step_id: str
    name: str
    type: str
    status: str
    activated_at: str | None  # as `iso` writes it
    completed_at: str | None
    iteration: int = 1
    fire_at: str | None = None  # a `timer` step's time
    message: str = ""  # a `wait` step's message name
    child_case_id: str | None = None  # a `case` step's child
    result: Any = None
    outcome: str = ""
    completed_by: str | None = None
    error: str = ""


@dataclass
class CaseDetail:
    case: CaseRow
    workflow_version: int | None  # the bound workflow's version; None without a workflow
    steps: list[StepRow]
    # The workflows app's `family_of`: parentId, children and the steps' earlier runs (history).
    family: dict[str, Any] = dataclass_field(default_factory=dict)


@dataclass
class CaseListPage:
    rows: list[tuple[CaseRow, str | None]]  # each case with its current step; limit + 1 at most
    total: int


def _iso_sql(column: str) -> str:
    return f"""to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"""


_CASE_COLUMNS = f"""c.id::text, c.case_number, c.display_name, c.case_type_id::text, t.key,
  c.workflow_version_id::text, c.status, c.data, c.version, {_iso_sql("c.created_at")},
  c.created_by_id::text, {_iso_sql("c.updated_at")}, {_iso_sql("c.sla_deadline")},
  {_iso_sql("c.closed_at")}, c.outcome, c.status_reason"""

# The steps come as one JSON array, so the detail is one statement whether or not the case has a
# workflow.
PG_CASE_DETAIL = f"""
SELECT {_CASE_COLUMNS}, w.version,
  (SELECT json_agg(json_build_array(s.step_id, s.name, s.type, s.status, {_iso_sql("s.activated_at")},
                                    {_iso_sql("s.completed_at")}, s.iteration, {_iso_sql("s.fire_at")},
                                    s.message, s.child_case_id, s.result, s.outcome,
                                    s.completed_by_id::text, s.error) ORDER BY s.position)
   FROM workflows_casestep s WHERE s.case_id = c.id AND c.workflow_version_id IS NOT NULL),
  (SELECT p.case_id FROM (SELECT s.case_id FROM workflows_casestep s WHERE s.child_case_id = c.id
                          UNION ALL
                          SELECT r.case_id FROM workflows_steprun r WHERE r.child_case_id = c.id) p LIMIT 1),
  (SELECT json_agg(json_build_array(k.id, k.case_number, k.status) ORDER BY k.created_at, k.id)
   FROM cases_case k WHERE k.id IN (
     SELECT s.child_case_id FROM workflows_casestep s WHERE s.case_id = c.id AND s.child_case_id IS NOT NULL
     UNION
     SELECT r.child_case_id FROM workflows_steprun r WHERE r.case_id = c.id AND r.child_case_id IS NOT NULL)),
  (SELECT json_agg(json_build_array(r.step_id, r.type, r.iteration, r.status, r.result, r.outcome,
                                    r.completed_by_id, {_iso_sql("r.activated_at")},
                                    {_iso_sql("r.completed_at")}) ORDER BY r.id)
   FROM workflows_steprun r WHERE r.case_id = c.id)
FROM cases_case c
JOIN cases_casetype t ON t.id = c.case_type_id
LEFT JOIN workflows_workflow w ON w.id = c.workflow_version_id
WHERE c.tenant_id = %(tenant)s AND c.id = %(case)s
"""  # noqa: S608 - columns from code; values are placeholders


def case_detail(*, user: User, case_id: Any) -> CaseDetail:
    """The case with its workflow's version and steps, if it belongs to the caller's tenant;
    otherwise 404 (as `access_case`)."""
    if connection.vendor != "postgresql":
        case = access_case(user=user, case_id=case_id)
        workflow = case.workflow_version
        steps = hooks.workflows().steps_of(case) if workflow else []
        return CaseDetail(
            CaseRow.of(case),
            workflow.version if workflow else None,
            [StepRow(*s) for s in steps],
            hooks.workflows().family_of(case.id),
        )
    with prepared_cursor() as cursor:
        cursor.execute(PG_CASE_DETAIL, {"tenant": user.member_tenant_id, "case": case_id})
        row = cursor.fetchone()
    if row is None:
        raise NotFound("Case not found.")
    found = CaseRow._make(row[:16])._replace(data=_json(row[7]))
    step_rows = [StepRow(*s) for s in _json(row[17]) or ()]
    return CaseDetail(found, row[16], step_rows, _family(row[18], _json(row[19]), _json(row[20])))


# The order of a history entry's columns in PG_CASE_DETAIL (as the workflows app's `family_of`).
_RUN_KEYS = (
    "stepId",
    "type",
    "iteration",
    "status",
    "result",
    "outcome",
    "completedBy",
    "activatedAt",
    "completedAt",
)


def _family(parent_id: Any, children: Any, history: Any) -> dict[str, Any]:
    runs = [dict(zip(_RUN_KEYS, run, strict=True)) for run in history or ()]
    for run in runs:
        run["outcome"] = run["outcome"] or None
    return {
        "parentId": str(parent_id) if parent_id else None,
        "children": [{"id": str(i), "caseNumber": n, "status": st} for i, n, st in children or ()],
        "history": runs,
    }


def _json(value: Any) -> Any:
    # Django reads jsonb as text (its JSONField decodes it); json_agg's `json` arrives decoded.
    return json.loads(value) if isinstance(value, str) else value


def case_list_page(*, user: User, page: Page, **filters: Any) -> CaseListPage:
    """A page of `case_list` (limit + 1 rows: the last tells that another page follows), each case
    with its current step (`current_steps`), and the list's total (`list_total`). `filters` are
    `case_list`'s keywords."""
    f = CaseFilters(**filters)
    if connection.vendor != "postgresql":
        cases = _case_list(user, f)
        found = case_page(cases, page)
        steps = current_steps([c.id for c in found])
        return CaseListPage([(CaseRow.of(c), steps.get(c.id)) for c in found], list_total(cases))
    where, values = _pg_list_filter(user, f)
    order = _pg_list_order(f)
    values.update(limit=page.limit + 1, offset=page.offset, cap=EXACT_TOTAL_UP_TO + 1)
    with prepared_cursor() as cursor:
        cursor.execute(_pg_list_sql(where, order), values)
        found = cursor.fetchall()
        if found:
            counted = found[0][-1]
        elif page.offset == 0:
            counted = 0
        else:  # past the last page: the total alone
            cursor.execute(f"SELECT ({_pg_capped_count(where)})", values)
            counted = cursor.fetchone()[0]
    total = counted
    if counted > EXACT_TOTAL_UP_TO:  # the planner's estimate, as list_total (EXPLAIN is not preparable)
        with connection.cursor() as cursor:
            cursor.execute(
                f"EXPLAIN (FORMAT JSON) SELECT 1 FROM cases_case c WHERE {where.format(c='c')}",  # noqa: S608 - clauses from code; values are placeholders
                values,
            )
            plan = cursor.fetchone()[0]
            plan = json.loads(plan) if isinstance(plan, str) else plan
            total = max(int(plan[0]["Plan"]["Plan Rows"]), counted)
    rows = [(CaseRow._make(r[:16])._replace(data=_json(r[7])), r[16]) for r in found]
    return CaseListPage(rows, total)


def _pg_list_sql(where: str, order: str) -> str:
    """The page's ids are picked first, from ids alone (an index-only scan, see `case_page`); the
    current step and the capped count ride along as subqueries (the count runs once)."""
    return f"""
SELECT {_CASE_COLUMNS},
  (SELECT s.name FROM workflows_casestep s WHERE s.case_id = c.id AND s.status = '{hooks.workflows().step_active}'
   ORDER BY s.position LIMIT 1),
  ({_pg_capped_count(where)})
FROM cases_case c
JOIN cases_casetype t ON t.id = c.case_type_id
WHERE {where.format(c="c")} AND c.id IN (
  SELECT p.id FROM cases_case p WHERE {where.format(c="p")}
  ORDER BY {order.format(c="p")} LIMIT %(limit)s OFFSET %(offset)s
)
ORDER BY {order.format(c="c")}
"""  # noqa: S608 - clauses and order from code; values are placeholders


def _pg_capped_count(where: str) -> str:
    return f"SELECT count(*) FROM (SELECT 1 FROM cases_case n WHERE {where.format(c='n')} LIMIT %(cap)s) AS capped"  # noqa: S608 - clauses from code; values are placeholders


def _pg_list_filter(user: User, f: CaseFilters) -> tuple[str, dict[str, Any]]:
    """`case_list`'s filters as SQL over the table alias `{c}`, with their parameters."""
    tenant = user.member_tenant_id
    clauses = ["{c}.tenant_id = %(tenant)s"]
    values: dict[str, Any] = {"tenant": tenant}
    if f.case_type_id:
        clauses.append("{c}.case_type_id = %(case_type)s")
        values["case_type"] = f.case_type_id
    if f.status:
        clauses.append("{c}.status = %(status)s")
        values["status"] = f.status
    if f.created_after:
        clauses.append("{c}.created_at >= %(created_after)s")
        values["created_after"] = f.created_after
    if f.created_before:
        clauses.append("{c}.created_at < %(created_before)s")
        values["created_before"] = f.created_before
    if f.assigned_to:
        clauses.append(
            "{c}.id IN (SELECT a.case_id FROM workflows_casestep a WHERE a.tenant_id = %(tenant)s "  # noqa: S608 - a status constant; values are placeholders
            f"AND a.type = 'task' AND a.status = '{hooks.workflows().step_active}' AND a.assigned_to_id = %(assignee)s)"
        )
        values["assignee"] = f.assigned_to
    return " AND ".join(clauses), values


def _pg_list_order(f: CaseFilters) -> str:
    """`_ordering` as SQL over the alias `{c}` (the same terms, so the same indexes serve it)."""
    sort_by = f.sort_by
    direction = "DESC" if f.descending else "ASC"
    nulls = " NULLS LAST" if sort_by in NULLABLE_SORT_FIELDS else ""
    terms = [f"{{c}}.{SORT_FIELDS[sort_by]} {direction}{nulls}"]
    if sort_by != "created_at":  # else the tie-break repeats the primary term
        terms.append(f"{{c}}.created_at {direction}")
    terms.append("{c}.id ASC")
    return ", ".join(terms)


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

# Broad queries rank only their newest matches: ranking means reading every match's tsvector, and a
# word found in a quarter of a million cases took seconds; the newest matches come from the
# (tenant, created_at) index in order. A query with fewer matches ranks them all, as before.
RANKED_MATCHES = 1000
MATCHES = "c.tenant_id = %(tenant)s AND c.search_vector @@ websearch_to_tsquery('english', %(q)s)"

PG_SEARCH = f"""
WITH candidates AS (
  SELECT c.id, c.display_name, c.case_type_id, c.case_number, c.search_text, c.created_at, c.search_vector
  FROM cases_case c
  WHERE {MATCHES}
  ORDER BY c.created_at DESC, c.id DESC
  LIMIT %(ranked)s
),
hits AS (
  SELECT id, display_name, case_type_id, case_number, search_text, created_at,
         ts_rank_cd(search_vector, websearch_to_tsquery('english', %(q)s)) AS relevance
  FROM candidates
  ORDER BY relevance DESC, created_at DESC, id DESC
  LIMIT %(limit)s OFFSET %(offset)s
)
SELECT id, display_name, case_type_id, case_number, relevance,
       ts_headline('english', search_text, websearch_to_tsquery('english', %(q)s), '{HEADLINE_OPTIONS}')
FROM hits
ORDER BY relevance DESC, created_at DESC, id DESC
"""  # noqa: S608 - constants; values are placeholders
PG_COUNT = f"SELECT count(*) FROM (SELECT 1 FROM cases_case c WHERE {MATCHES} LIMIT %(cap)s) AS counted"  # noqa: S608 - constants; values are placeholders
PG_ESTIMATE = f"EXPLAIN (FORMAT JSON) SELECT 1 FROM cases_case c WHERE {MATCHES}"  # noqa: S608 - constants; values are placeholders


def case_search(*, tenant_id: Any, teams: str, q: str, page: Page) -> tuple[list[SearchHit], int, bool]:
    """A page of hits, the number of matches (see `list_total`) and whether another page follows.
    `teams` is the caller's `User.rls_teams` (accessTeams: PostgreSQL's policy applies it there)."""
    if connection.vendor == "postgresql":
        return _search_postgresql(tenant_id, q, page)
    hits, total = _search_fallback(tenant_id, teams, q, page)
    return hits, total, page.offset + page.limit < total


def _search_postgresql(tenant_id: Any, q: str, page: Page) -> tuple[list[SearchHit], int, bool]:
    # Ranking runs over at most RANKED_MATCHES matches; ts_headline (costly) only over the page's rows.
    params: dict[str, str | int] = {
        "q": q,
        "tenant": str(tenant_id),
        "ranked": RANKED_MATCHES,
        "limit": page.limit + 1,  # one more: is there a next page?
        "offset": page.offset,
    }
    with connection.cursor() as cursor:
        cursor.execute(PG_SEARCH, params)
        rows = cursor.fetchall()
    hits = [SearchHit(r[0], r[1], r[2], r[3], round(float(r[4]), 6), r[5]) for r in rows[: page.limit]]
    return hits, _pg_count(tenant_id, q), len(rows) > page.limit


def _pg_count(tenant_id: Any, q: str) -> int:
    """Exact up to RANKED_MATCHES matches, then the planner's estimate (as `list_total`). The cap is
    the ranked window, not EXACT_TOTAL_UP_TO: a word in a few percent of the cases is checked row by
    row in date order, and finding 10,000 of its matches meant reading ~150,000 rows."""
    params: dict[str, str | int] = {"q": q, "tenant": str(tenant_id), "cap": RANKED_MATCHES + 1}
    with connection.cursor() as cursor:
        cursor.execute(PG_COUNT, params)
        counted = int(cursor.fetchone()[0])
        if counted <= RANKED_MATCHES:
            return counted
        cursor.execute(PG_ESTIMATE, params)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    return max(int(plan[0]["Plan"]["Plan Rows"]), counted)


def _search_fallback(tenant_id: Any, teams: str, q: str, page: Page) -> tuple[list[SearchHit], int]:
    """Without a full-text index (SQLite): every word must occur in the case's text, in any letter
    case (a substring, so "flood" also finds "flooded"); double quotes only delimit words; relevance
    counts occurrences. SQLite's LIKE folds ASCII letters only, so it narrows the candidates by the
    ASCII words and Python decides on every word."""
    terms = [t.lower() for t in re.findall(r'[^\s"]+', q)]
    if not terms:  # only quotes: no word to look for, as the full-text query has none either
        return [], 0
    cases = Case.objects.filter(teams_q(teams), tenant_id=tenant_id)
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
        # date_part (double precision), not EXTRACT, which computes in `numeric` and made the ageing
        # query over 600,000 active cases about half again as slow.
        template = f"FLOOR(date_part('epoch', %(expressions)s) / {WEEK_SECONDS})::integer"
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
    active_by_age_in_weeks: list[int]  # index = age in whole weeks; empty unless asked for


@dataclass
class _Tally:
    """What the passes over the tenant's cases add up, before case type ids become keys."""

    by_status: dict[str, int]
    by_type_id: dict[Any, int]
    resolved: int = 0
    resolution: timedelta = timedelta(0)
    sla_met: int = 0
    sla_measured: int = 0

    def add(self, status: str, case_type_id: Any, n: int) -> None:
        self.by_status[status] += n
        self.by_type_id[case_type_id] = self.by_type_id.get(case_type_id, 0) + n


# Active cases by case type and age in whole weeks, and those past their deadline, in one statement:
# one index range scan (tenant, 'active', created_at] per week, so PostgreSQL counts the rows of
# the cover index without computing an age for each of them (a grouping by a computed age hashed
# 600,000 values and could not run in parallel). Week -1 holds cases created after `now` (a
# concurrent create): counted by status and type, as before, but in no week. The bounds are columns
# of `weeks`, not expressions inside the scan's condition: under row-level security only leakproof
# operators (here the timestamp comparisons) may become index conditions ahead of the policy.
ACTIVE_BY_WEEK_SQL = """
WITH weeks AS MATERIALIZED (
  SELECT k,
         CASE WHEN k < 0 THEN 'infinity'::timestamptz ELSE %(now)s - k * %(week)s::interval END AS newest,
         CASE WHEN k < 0 THEN %(now)s ELSE %(now)s - (k + 1) * %(week)s::interval END AS oldest
  FROM generate_series(-1, (
    SELECT GREATEST(-1, FLOOR(date_part('epoch', %(now)s - min(c.created_at)) / %(week_seconds)s)::integer)
    FROM cases_case c WHERE c.tenant_id = %(tenant)s AND c.status = 'active'
  )) AS k
)
SELECT w.k, s.case_type_id, s.n, s.breached
FROM weeks w CROSS JOIN LATERAL (
  SELECT c.case_type_id, count(*) AS n, count(*) FILTER (WHERE c.sla_deadline < %(now)s) AS breached
  FROM cases_case c
  WHERE c.tenant_id = %(tenant)s AND c.status = 'active' AND c.created_at <= w.newest AND c.created_at > w.oldest
  GROUP BY c.case_type_id
) s
"""


def case_dashboard(*, tenant_id: Any, teams: str, ageing: bool = True) -> Dashboard:
    """The tenant's figures, read status by status: each pass scans that status's own range of the
    `case_tenant_status_cover` index (index-only: every column read is in it, none of the table's
    rows, which carry the data and the search text) and computes only what that status contributes.
    Each case is read once; closed cases alone carry the resolution and SLA arithmetic. `ageing`
    (the case dashboard's active cases by age in weeks) is left out by the reports dashboard.
    `teams` is the caller's `User.rls_teams`: cases it may not see are not counted (on PostgreSQL
    the `team_access` policy leaves them out of every pass, the raw ageing statement included)."""
    now = timezone.now()
    cases = Case.objects.filter(teams_q(teams), tenant_id=tenant_id).order_by()
    tally = _Tally(by_status={status: 0 for status in STATUSES}, by_type_id={})
    with _one_snapshot():
        ages = _tally_active(tally, tenant_id, cases, now, ageing)
        _tally_closed(tally, cases)
        for status in (s for s in STATUSES if s not in (Case.ACTIVE, Case.CLOSED)):  # cancelled: counted
            for row in cases.filter(status=status).values("case_type_id").annotate(n=Count("*")):
                tally.add(status, row["case_type_id"], row["n"])
        return _dashboard_of(tally, ages)


@contextmanager
def _one_snapshot() -> Iterator[None]:
    """The passes see one snapshot of the cases (PostgreSQL's REPEATABLE READ), so a case closed
    between two of them is counted once, as closed or as active. Inside a caller's transaction
    (which has already read) its isolation stands."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


def _tally_active(
    tally: _Tally, tenant_id: Any, cases: QuerySet[Case], now: Any, ageing: bool
) -> dict[int, int]:
    """Active cases by type; those past their deadline (SLA breached); by age in weeks if asked."""
    # Decision: SLA measured over closed cases with a deadline (met when closed in time) plus
    # active cases already past their deadline (breached); cancelled cases are not counted.
    ages: dict[int, int] = {}
    if ageing and connection.vendor == "postgresql":
        # A week as 604,800 seconds, not '7 days' (a day is not always 24 hours in a session's zone).
        params = {"now": now, "week": f"{WEEK_SECONDS} seconds", "week_seconds": WEEK_SECONDS}
        with connection.cursor() as cursor:
            cursor.execute(ACTIVE_BY_WEEK_SQL, {**params, "tenant": str(tenant_id)})
            rows = cursor.fetchall()
        for week, case_type_id, n, breached in rows:
            tally.add(Case.ACTIVE, case_type_id, n)
            tally.sla_measured += breached
            if week >= 0:
                ages[week] = ages.get(week, 0) + n
        return ages
    active = cases.filter(status=Case.ACTIVE)
    groups = active.values("case_type_id").annotate(
        n=Count("*"), breached=Count("created_at", filter=Q(sla_deadline__lt=now))
    )
    for group in groups:
        tally.add(Case.ACTIVE, group["case_type_id"], group["n"])
        tally.sla_measured += group["breached"]
    if ageing:  # not PostgreSQL: the age of each case, grouped
        weeks = active.annotate(week=AgeInWeeks("created_at", now)).values("week").annotate(n=Count("*"))
        ages = {week: n for week, n in weeks.values_list("week", "n") if week >= 0}
    return ages


def _tally_closed(tally: _Tally, cases: QuerySet[Case]) -> None:
    groups = (
        cases.filter(status=Case.CLOSED)
        .values("case_type_id")
        .annotate(
            n=Count("*"),
            resolved=Count("closed_at"),
            resolution=Sum(ExpressionWrapper(F("closed_at") - F("created_at"), output_field=DurationField())),
            sla_met=Count("created_at", filter=Q(closed_at__lte=F("sla_deadline"))),  # closed in time
            sla_measured=Count("sla_deadline"),  # closed cases with a deadline
        )
    )
    for group in groups:
        tally.add(Case.CLOSED, group["case_type_id"], group["n"])
        tally.resolved += group["resolved"]
        tally.resolution += group["resolution"] or timedelta(0)
        tally.sla_met += group["sla_met"]
        tally.sla_measured += group["sla_measured"]


def _dashboard_of(tally: _Tally, ages: dict[int, int]) -> Dashboard:
    keys = dict(CaseType.objects.filter(id__in=set(tally.by_type_id)).values_list("id", "key"))
    by_type: dict[str, int] = {}
    for case_type_id, n in tally.by_type_id.items():
        by_type[keys[case_type_id]] = by_type.get(keys[case_type_id], 0) + n
    resolved = tally.resolved
    return Dashboard(
        by_status=tally.by_status,
        by_type=by_type,
        avg_resolution_seconds=round(tally.resolution.total_seconds() / resolved, 3) if resolved else 0.0,
        sla_compliance_rate=round(tally.sla_met / tally.sla_measured, 4) if tally.sla_measured else 1.0,
        active_by_age_in_weeks=[ages.get(week, 0) for week in range(max(ages, default=-1) + 1)],
    )


def case_access_teams(case_id: str) -> str | None:
    """A case's access teams as stored ("" = open to the tenant), or None when there is no such case."""
    try:
        key = UUID(case_id)
    except ValueError:
        return None  # not a case id: a message about no case hides nothing
    return Case.objects.filter(pk=key).values_list("access_teams", flat=True).first()
