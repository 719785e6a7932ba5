"""Inbox filters, autosaved drafts and the live-update ticket, through Django's test client."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from casemgmt.accounts.authentication import authenticate_token
from casemgmt.realtime.tickets import ticket_redeem
from casemgmt.workflows.models import CaseStep
from shared.api.errors import NotAuthenticated
from tests.casemgmt.console.conftest import FORM, signed_in
from tests.casemgmt.workflows.conftest import Flow

pytestmark = pytest.mark.django_db


def test_inbox_filters_by_holder_case_type_and_due_day(waiting_case, admin_user, api):
    other = Flow(api, admin_user)
    other.workflow(
        [{"id": "triage", "name": "Triage intake", "type": "task", "formSchema": FORM, "slaHours": 48}]
    )
    other.case({"amount": 3, "title": "Flooded basement"})
    client = signed_in(admin_user)
    assert client.post(f"/console/tasks/{waiting_case['id']}/review/claim").status_code == 302

    def names(query: str) -> set[str]:
        page = client.get(f"/console/?{query}")
        assert page.status_code == 200, page.content
        text = page.content.decode()
        return {name for name in ("Review claim", "Triage intake") if name in text}

    assert names("") == {"Review claim", "Triage intake"}
    assert names("status=claimed") == {"Review claim"}
    assert names("status=unclaimed") == {"Triage intake"}
    assert names(f"caseType={other.key}") == {"Triage intake"}
    due = CaseStep.objects.get(step_id="triage").due_at
    assert names(f"dueFrom={due.date()}&dueBy={due.date()}") == {"Triage intake"}
    assert names(f"dueBy={due.date().replace(year=due.year - 1)}") == set()
    assert names("sortBy=dueDate&status=") == {"Review claim", "Triage intake"}


def test_the_due_days_are_the_users_days(waiting_case, admin_user, api):
    """A task due at 20:00 UTC is due the next morning in Auckland: the filter's days are the
    user's."""
    from datetime import UTC, datetime

    from casemgmt.accounts.services import preferences_update

    due = datetime(2030, 6, 1, 20, 0, tzinfo=UTC)  # 2 June, 08:00 in Auckland (NZST, +12)
    CaseStep.objects.filter(case_id=waiting_case["id"], step_id="review").update(due_at=due)
    client = signed_in(admin_user)

    def shown(day: str) -> bool:
        return "Review claim" in client.get(f"/console/?dueFrom={day}&dueBy={day}").content.decode()

    assert shown("2030-06-01") and not shown("2030-06-02")  # UTC by default
    preferences_update(user=admin_user, changes={"timezone": "Pacific/Auckland"})
    assert shown("2030-06-02") and not shown("2030-06-01")
    page = client.get("/console/?dueFrom=2030-06-02").content.decode()
    assert '06/02/2030 8 a.m. <span class="zone">NZST</span>' in page  # shown on Auckland's clock


def test_a_bad_inbox_filter_is_a_400_with_the_form(admin_user, waiting_case):
    client = signed_in(admin_user)
    for query, message in (
        ("dueBy=tomorrow", "Due by must be a date (YYYY-MM-DD)"),
        ("status=lost", "status must be"),
    ):
        page = client.get(f"/console/?{query}")
        assert page.status_code == 400
        assert message in page.content.decode() and 'id="filter-status"' in page.content.decode()


def test_draft_is_saved_restored_and_cleared_on_completion(waiting_case, admin_user):
    client = signed_in(admin_user)
    task_url = f"/console/tasks/{waiting_case['id']}/review"
    saved = client.post(task_url + "/draft", {"amount": "7", "note": "half way", "channel": ""})
    assert saved.status_code == 200 and b"Draft saved at" in saved.content
    row = CaseStep.objects.get(case_id=waiting_case["id"], step_id="review")
    assert row.draft == {"amount": 7, "note": "half way", "approved": False}
    page = client.get(task_url).content.decode()
    assert 'value="7"' in page and 'value="half way"' in page and "Draft saved at" in page
    assert client.post(task_url, {"amount": "7", "approved": "on"}).status_code == 302
    row.refresh_from_db()
    assert (row.status, row.draft, row.draft_saved_at) == (CaseStep.COMPLETED, None, None)
    again = client.post(task_url + "/draft", {"amount": "1"})
    assert again.status_code == 409 and b"Draft not saved" in again.content


def test_draft_needs_the_permission_the_tenant_and_a_session(waiting_case, tenant, make_user, other_tenant):
    from casemgmt.accounts.models import User

    url = f"/console/tasks/{waiting_case['id']}/review/draft"
    reader = signed_in(make_user(tenant, permissions=["tasks:read"]))
    assert reader.post(url, {"amount": "1"}).status_code == 403
    outsider = signed_in(User.objects.get(tenant=other_tenant, roles__name="admin"))
    assert outsider.post(url, {"amount": "1"}).status_code == 404
    anonymous = Client().post(url, {"amount": "1"})
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/console/login")
    assert CaseStep.objects.get(case_id=waiting_case["id"], step_id="review").draft is None


def test_draft_of_a_task_someone_else_holds_is_refused(waiting_case, tenant, make_user, admin_user):
    holder = make_user(tenant, roles=["admin"])
    assert signed_in(holder).post(f"/console/tasks/{waiting_case['id']}/review/claim").status_code == 302
    refused = signed_in(admin_user).post(f"/console/tasks/{waiting_case['id']}/review/draft", {"amount": "2"})
    assert refused.status_code == 409 and b"claimed by another user" in refused.content


def test_live_ticket_stands_for_a_token_the_page_never_sees_and_sign_out_revokes_it(admin_user):
    client = signed_in(admin_user)
    response = client.post("/console/live/ticket")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"ticket", "expiresAt"} and body["expiresAt"].endswith("Z")
    token = ticket_redeem(body["ticket"])
    assert token is not None and token not in response.content.decode()
    assert ticket_redeem(body["ticket"]) is None  # one use
    user, claims = authenticate_token(token)
    assert user.pk == admin_user.pk
    assert claims["exp"] - claims["iat"] <= settings.JWT["LIFETIME"].total_seconds()
    assert client.post("/console/logout").status_code == 302
    with pytest.raises(NotAuthenticated):
        authenticate_token(token)


def test_live_ticket_needs_a_session_csrf_and_post():
    anonymous = Client().post("/console/live/ticket")
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/console/login")


def test_live_ticket_checks_csrf(admin_user):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(admin_user, backend="casemgmt.accounts.backends.EmailBackend")
    assert strict.post("/console/live/ticket").status_code == 403
    assert signed_in(admin_user).get("/console/live/ticket").status_code == 405


def test_case_page_and_inbox_carry_their_live_regions(waiting_case, admin_user):
    client = signed_in(admin_user)
    case = client.get(f"/console/cases/{waiting_case['id']}").content.decode()
    assert f'data-live="{waiting_case["id"]}"' in case
    assert f'data-live-url="/console/cases/{waiting_case["id"]}"' in case
    response = client.get("/console/?status=unclaimed")
    inbox = response.content.decode()
    assert 'data-live="any"' in inbox and 'data-live-url="/console/?status=unclaimed"' in inbox
    assert "no-store" in response["Cache-Control"]  # a reload never gets a kept copy
    assert 'id="live"' in case and "/console/live/ticket" in case


def test_autosave_is_offered_only_to_those_who_may_complete(waiting_case, admin_user, tenant, make_user):
    url = f"/console/tasks/{waiting_case['id']}/review"
    assert "/review/draft" in signed_in(admin_user).get(url).content.decode()
    reader = signed_in(make_user(tenant, permissions=["tasks:read"]))
    page = reader.get(url)
    assert page.status_code == 200 and "/review/draft" not in page.content.decode()


def test_inbox_shows_the_users_items_per_page(waiting_case, admin_user, api):
    from casemgmt.accounts.services import preferences_update

    flow = Flow(api, admin_user)
    flow.workflow([{"id": "triage", "name": "Triage intake", "type": "task", "formSchema": FORM}])
    for n in range(3):
        flow.case({"amount": n + 1})
    preferences_update(user=admin_user, changes={"itemsPerPage": 2})
    client = signed_in(admin_user)
    page = client.get("/console/").content.decode()
    assert page.count('data-shortcut="c"') == 2
    assert "1–2 of 4" in page and 'href="?page=2"' in page
    second = client.get("/console/?page=2").content.decode()
    assert second.count('data-shortcut="c"') == 2 and "3–4 of 4" in second and 'href="?page=1"' in second
