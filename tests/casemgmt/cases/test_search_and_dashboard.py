"""GET /cases/search (PostgreSQL full-text) and GET /cases/dashboard (database aggregation)."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from casemgmt.cases.models import Case
from casemgmt.cases.selectors import ACTIVE_BY_WEEK_SQL, _one_snapshot, case_dashboard
from casemgmt.cases.services import case_close, case_type_create
from casemgmt.tenancy import rls

pytestmark = pytest.mark.django_db


@pytest.fixture
def claims(make_case):
    flood = make_case(
        data={
            "applicant": {"name": "Grace Hopper"},
            "amount": 1,
            "description": "Basement flooded after storm",
        }
    )
    fire = make_case(
        data={"applicant": {"name": "Alan Turing"}, "amount": 2, "description": "Kitchen fire, smoke damage"}
    )
    both = make_case(
        data={
            "applicant": {"name": "Flood Fire"},
            "amount": 3,
            "description": "flooding and fires",
            "tags": ["flood"],
        }
    )
    return flood, fire, both


def search(client, query):
    response = client.get("/cases/search", {"q": query})
    assert response.status_code == 200, response.json()
    return response.json()


def test_search_hits_have_fields_relevance_and_excerpt(api, reader, claims):
    flood, _, both = claims
    body = search(api(reader), "flood")
    assert body["total"] == 2 and body["next"] is None
    hits = body["data"]
    assert {h["id"] for h in hits} == {str(flood.id), str(both.id)}
    assert hits[0]["id"] == str(both.id)  # matches three times: ranked first
    assert hits[0]["relevance"] > hits[1]["relevance"] > 0
    for hit in hits:
        assert set(hit) == {"id", "caseNumber", "displayName", "caseTypeId", "relevance", "excerpt"}
        assert isinstance(hit["relevance"], float) and "**" in hit["excerpt"]
    assert "**flooded**" in next(h["excerpt"] for h in hits if h["id"] == str(flood.id)).lower()


def test_search_covers_names_numbers_and_stemming(api, reader, claims):
    flood, fire, _ = claims
    client = api(reader)
    assert [h["id"] for h in search(client, "turing")["data"]] == [str(fire.id)]
    assert [h["id"] for h in search(client, fire.case_number)["data"]] == [str(fire.id)]
    assert [h["id"] for h in search(client, fire.case_number.split("-")[1])["data"]] == [str(fire.id)]
    assert {h["id"] for h in search(client, "fire")["data"]} >= {str(fire.id)}
    assert search(client, "volcano") == {"data": [], "total": 0, "next": None}


def test_search_updates_with_the_data(api, admin_user, reader, claims):
    flood = claims[0]
    api(admin_user).patch(f"/cases/{flood.id}/data", {"data": {"description": "earthquake"}}, format="json")
    assert [h["id"] for h in search(api(reader), "earthquake")["data"]] == [str(flood.id)]


def test_search_paging(api, reader, claims):
    client = api(reader)
    first = client.get("/cases/search?q=flood&limit=1").json()
    assert first["total"] == 2 and len(first["data"]) == 1 and "offset=1" in first["next"]
    second = client.get(first["next"]).json()
    assert (
        len(second["data"]) == 1
        and second["data"][0]["id"] != first["data"][0]["id"]
        and second["total"] == 2
    )


def test_a_broad_search_ranks_its_newest_matches_and_counts_past_them(api, reader, claims, monkeypatch):
    from casemgmt.cases import selectors

    flood, fire, both = claims
    monkeypatch.setattr(
        selectors, "RANKED_MATCHES", 2
    )  # a word in a quarter of a million cases, in miniature
    client = api(reader)
    body = search(client, "fire")  # matches `fire` and `both`, and nothing older
    assert body["total"] == 2 and [h["id"] for h in body["data"]] == [str(both.id), str(fire.id)]
    body = search(client, "flood or fire")  # three matches: the oldest (`flood`) is outside the ranked window
    # past the window `total` is the database's estimate, never below the matches counted
    assert body["total"] >= 3 and {h["id"] for h in body["data"]} == {str(fire.id), str(both.id)}
    first = client.get("/cases/search?q=flood%20or%20fire&limit=1").json()
    second = client.get(first["next"]).json()
    assert second["total"] >= 3 and second["next"] is None  # paging stops at the end of the window
    assert {first["data"][0]["id"], second["data"][0]["id"]} == {str(fire.id), str(both.id)}


def test_search_uses_the_gin_index(db, claims):
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'case_search_vector_gin'")
        assert "gin (search_vector)" in cursor.fetchone()[0]


@pytest.mark.parametrize("query", ["", "q=", "q=x&limit=101", "q=x&limit=0"])
def test_search_bad_input_is_400(api, reader, query):
    assert api(reader).get(f"/cases/search?{query}").status_code == 400


def test_search_permissions_and_tenancy(api, outsider, make_user, tenant, claims):
    assert search(api(outsider), "flood")["total"] == 0
    assert (
        api(make_user(tenant, permissions=["reports:read"])).get("/cases/search?q=flood").status_code == 403
    )
    assert api(None).get("/cases/search?q=flood").status_code == 401


# --- dashboard --------------------------------------------------------------------------------


def test_dashboard_metrics(api, admin_user, make_user, tenant, make_case):
    complaint = case_type_create(
        user=admin_user, key="complaint", display_name="Complaint", schema={"type": "object"}
    )
    on_time, late, active_breached, _, old = (make_case() for _ in range(5))
    make_case(of_type=complaint, data={})
    cancelled = make_case(of_type=complaint, data={})
    now = timezone.now()
    # Shape the timeline: on_time resolved in 1h, late resolved after its deadline (3h), one active
    # case overdue, and one active case 3 weeks old.
    Case.objects.filter(pk=on_time.pk).update(
        created_at=now - timedelta(hours=2), sla_deadline=now + timedelta(hours=1)
    )
    Case.objects.filter(pk=late.pk).update(
        created_at=now - timedelta(hours=4), sla_deadline=now - timedelta(hours=3)
    )
    Case.objects.filter(pk=active_breached.pk).update(sla_deadline=now - timedelta(minutes=1))
    Case.objects.filter(pk=old.pk).update(created_at=now - timedelta(days=22))
    case_close(user=admin_user, case=on_time)
    case_close(user=admin_user, case=late)
    Case.objects.filter(pk=on_time.pk).update(closed_at=now - timedelta(hours=1))
    Case.objects.filter(pk=late.pk).update(closed_at=now - timedelta(hours=1))
    cancelled.status = Case.CANCELLED
    cancelled.save()

    user = make_user(tenant, permissions=["cases:read", "reports:read"])
    response = api(user).get("/cases/dashboard")
    assert response.status_code == 200
    body = response.json()
    assert body["totalActive"] == 4 and body["totalClosed"] == 2
    assert body["byStatus"] == {"active": 4, "closed": 2, "cancelled": 1}
    assert body["byType"] == {"insurance_claim": 5, "complaint": 2}
    assert body["avgResolutionTime"] == pytest.approx((3600 + 3 * 3600) / 2, abs=1)
    # measured: on_time (met), late (breached), active_breached (breached) -> 1/3
    assert body["slaComplianceRate"] == pytest.approx(1 / 3, abs=1e-3)
    assert body["ageingByWeek"] == [
        {"week": 0, "count": 3},
        {"week": 1, "count": 0},
        {"week": 2, "count": 0},
        {"week": 3, "count": 1},
    ]


def test_dashboard_of_an_empty_tenant(api, admin_user):
    body = api(admin_user).get("/cases/dashboard").json()
    assert body == {
        "totalActive": 0,
        "totalClosed": 0,
        "avgResolutionTime": 0.0,
        "slaComplianceRate": 1.0,
        "byStatus": {"active": 0, "closed": 0, "cancelled": 0},
        "byType": {},
        "ageingByWeek": [],
    }


def test_dashboard_counts_a_case_newer_than_its_clock_in_no_week(api, admin_user, make_case):
    """A case committed after the dashboard took `now` (a concurrent create) is counted by status
    and type, and in no week of age (it would be week -1)."""
    newer, week_one, _ = make_case(), make_case(), make_case()
    now = timezone.now()
    Case.objects.filter(pk=newer.pk).update(created_at=now + timedelta(hours=1))
    Case.objects.filter(pk=week_one.pk).update(created_at=now - timedelta(days=7, minutes=1))
    body = api(admin_user).get("/cases/dashboard").json()
    assert body["byStatus"] == {"active": 3, "closed": 0, "cancelled": 0}
    assert body["byType"] == {"insurance_claim": 3}
    assert body["ageingByWeek"] == [{"week": 0, "count": 1}, {"week": 1, "count": 1}]


def test_dashboard_without_ageing_has_the_same_figures(admin_user, tenant, make_case):
    """What the reports dashboard reads (no ages of active cases) agrees with the case dashboard."""
    cases = [make_case() for _ in range(4)]
    case_close(user=admin_user, case=cases[0])
    Case.objects.filter(pk=cases[1].pk).update(
        created_at=timezone.now() - timedelta(days=30), sla_deadline=timezone.now() - timedelta(days=27)
    )
    Case.objects.filter(pk=cases[2].pk).update(status=Case.CANCELLED)
    full = case_dashboard(tenant_id=tenant.id, teams="*")
    reduced = case_dashboard(tenant_id=tenant.id, teams="*", ageing=False)
    assert full.active_by_age_in_weeks == [1, 0, 0, 0, 1] and reduced.active_by_age_in_weeks == []
    assert (reduced.by_status, reduced.by_type) == (full.by_status, full.by_type)
    assert (reduced.avg_resolution_seconds, reduced.sla_compliance_rate) == (
        full.avg_resolution_seconds,
        full.sla_compliance_rate,
    )
    assert full.by_status == {"active": 2, "closed": 1, "cancelled": 1}
    assert full.sla_compliance_rate == 0.5  # closed in time; the 30-day-old one breached


def test_dashboard_ages_read_week_ranges_of_the_index_under_the_policy(tenant):
    """Each week's count is an index range scan: the bounds reach the index as conditions, which
    row-level security allows only for leakproof operators (the timestamp comparisons)."""
    now = timezone.now()
    params = {"now": now, "week": "604800 seconds", "week_seconds": 604800, "tenant": str(tenant.id)}
    with rls.tenant_transaction(tenant.id), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # the tiny test table would be scanned anyway
        cursor.execute("EXPLAIN " + ACTIVE_BY_WEEK_SQL, params)
        plan = [row[0] for row in cursor.fetchall()]
    conditions = [line for line in plan if "Index Cond:" in line]
    # Either order of the two bounds: the planner prints them as it arranged them.
    bounds = ("(created_at <= w.newest)", "(created_at > w.oldest)")
    assert any(all(b in c for b in bounds) for c in conditions), "\n".join(plan)


def test_dashboard_needs_cases_read_and_reports_read(api, make_user, tenant, other_tenant, make_case):
    make_case()
    assert api(make_user(tenant, permissions=["cases:read"])).get("/cases/dashboard").status_code == 403
    assert api(make_user(tenant, permissions=["reports:read"])).get("/cases/dashboard").status_code == 403
    assert api(None).get("/cases/dashboard").status_code == 401
    foreign = make_user(other_tenant, permissions=["cases:read", "reports:read"])
    assert api(foreign).get("/cases/dashboard").json()["totalActive"] == 0


def test_fallback_search_used_without_postgresql_full_text(db, tenant, claims):
    """The SQLite path is plain ORM (substring match), so it runs here too."""
    from casemgmt.cases.selectors import _search_fallback
    from shared.api.pagination import Page

    flood, _, both = claims
    hits, total = _search_fallback(tenant.id, "*", "flood", Page(limit=25, offset=0))
    assert total == 2 and [h.id for h in hits] == [both.id, flood.id]  # more occurrences first
    assert hits[0].relevance > hits[1].relevance and "**flood**" in hits[0].excerpt.lower()
    assert _search_fallback(tenant.id, "*", "flood basement", Page(limit=25, offset=0))[1] == 1
    assert _search_fallback(tenant.id, "*", "volcano", Page(limit=25, offset=0)) == ([], 0)


@pytest.mark.django_db(transaction=True)
def test_dashboard_passes_read_one_snapshot(api, admin_user, tenant, make_case):
    """Outside a transaction the passes share one snapshot: a case closed by another connection
    meanwhile is still counted once (as active), not in both passes or in neither."""
    first, _ = make_case(), make_case()

    def close_elsewhere() -> None:
        case_close(user=admin_user, case=Case.objects.get(pk=first.pk))
        connection.close()

    with _one_snapshot():
        assert connection.in_atomic_block
        before = Case.objects.filter(tenant=tenant, status=Case.ACTIVE).count()
        closer = threading.Thread(target=close_elsewhere)
        closer.start()
        closer.join()
        assert Case.objects.filter(tenant=tenant, status=Case.ACTIVE).count() == before == 2
        assert not Case.objects.filter(tenant=tenant, status=Case.CLOSED).exists()
    body = api(admin_user).get("/cases/dashboard").json()
    assert body["byStatus"] == {"active": 1, "closed": 1, "cancelled": 0}
