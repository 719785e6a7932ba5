"""Starting and finishing cases in the console, the case page (graph, step results, labelled data,
audit by name, paging) and the task page's reassign and escalate, through Django's test client.
Every page: the owner, a member without the permission, another tenant's member and anonymous."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest

from casemgmt.cases.models import Case
from casemgmt.workflows.models import CaseStep
from tests.casemgmt.console.conftest import signed_in
from tests.casemgmt.workflows.conftest import ok

pytestmark = pytest.mark.django_db

CLAIM_SCHEMA = {
    "type": "object",
    "required": ["amount_claimed", "due_from", "claimant"],
    "properties": {
        "amount_claimed": {
            "type": "integer",
            "title": "Amount claimed",
            "minimum": 1,
            "description": "In whole euros.",
        },
        "due_from": {"type": "string", "format": "date", "title": "Due from"},
        "channel": {"type": "string", "enum": ["mail", "phone"], "title": "Channel"},
        "claimant": {
            "type": "object",
            "title": "Claimant",
            "required": ["name"],
            "properties": {
                "name": {"type": "string", "title": "Full name"},
                "email": {"type": "string", "format": "email", "title": "Email"},
            },
        },
        "tags": {"type": "array", "title": "Tags", "items": {"type": "string"}},
    },
}
REVIEW_FORM = {
    "type": "object",
    "required": ["approved_amount"],
    "properties": {"approved_amount": {"type": "integer", "title": "Approved amount"}},
}


def claim_type(api, admin, *, outcomes: list[str] | None = None) -> str:
    client = api(admin)
    key = f"claim_{uuid.uuid4().hex[:6]}"
    ok(
        client.post(
            "/case-types", {"key": key, "displayName": "Motor claim", "schema": CLAIM_SCHEMA}, format="json"
        ),
        201,
    )
    steps = [{"id": "review", "name": "Review claim", "type": "task", "formSchema": REVIEW_FORM}]
    body: dict[str, Any] = {"caseTypeKey": key, "name": "Claims", "steps": steps}
    if outcomes:
        body["outcomes"] = outcomes
    draft = ok(client.post("/workflows", body, format="json"), 201)
    ok(client.post(f"/workflows/{draft['id']}/publish"))
    return key


GOOD = {
    "amount_claimed": "1200",
    "due_from": "2026-12-01",
    "channel": "phone",
    "claimant.name": "Ada Lovelace",
    "claimant.email": "ada@example.test",
    "tags": "windscreen\nurgent",
}


def start(client, key: str, **changes: str):
    return client.post("/console/cases/new", {"type": key, **GOOD, **changes})


def test_the_new_case_form_is_generated_from_the_schema(api, admin_user):
    key = claim_type(api, admin_user)
    client = signed_in(admin_user)
    chooser = client.get("/console/cases/new").content.decode()
    assert f'value="{key}"' in chooser and "Motor claim" in chooser
    page = client.get(f"/console/cases/new?type={key}").content.decode()
    assert '<label for="f-amount_claimed">Amount claimed (required)</label>' in page
    assert "In whole euros." in page and 'type="number" step="1" min="1"' in page
    assert 'id="f-due_from" name="due_from" type="date"' in page
    assert '<option value="phone"' in page
    assert "<legend>Claimant" in page and 'name="claimant.name"' in page and 'type="email"' in page
    assert '<textarea id="f-tags" name="tags"' in page and "One entry a line." in page
    # Required fields first, in the order `required` lists them; then the others by label.
    order = [
        page.index(f'id="f-{name}"') for name in ("amount_claimed", "due_from", "claimant", "channel", "tags")
    ]
    assert order == sorted(order)


def test_a_new_case_is_refused_in_words_then_started(api, admin_user):
    key = claim_type(api, admin_user)
    client = signed_in(admin_user)
    bad = start(client, key, amount_claimed="12.5", due_from="next week", **{"claimant.name": ""})
    assert bad.status_code == 400
    text = bad.content.decode()
    for sentence in (
        "Amount claimed must be a whole number",
        "Due from must be a date (YYYY-MM-DD)",
        "Full name is required",
    ):
        assert sentence in text, sentence
    assert 'aria-invalid="true"' in text and "is a required property" not in text
    # The summary above the form links each error to its field.
    assert '<a href="#f-amount_claimed">Amount claimed must be a whole number</a>' in text
    assert 'value="next week"' in text  # what was typed stays
    assert not Case.objects.filter(case_type__key=key).exists()
    done = start(client, key)
    assert done.status_code == 302
    case = Case.objects.get(case_type__key=key)
    assert done["Location"] == f"/console/cases/{case.id}"
    assert case.data == {
        "amount_claimed": 1200,
        "due_from": "2026-12-01",
        "channel": "phone",
        "claimant": {"name": "Ada Lovelace", "email": "ada@example.test"},
        "tags": ["windscreen", "urgent"],
    }
    page = client.get(done["Location"]).content.decode()
    assert f"{case.case_number} started." in page  # the success message
    assert (
        "<dt>Amount claimed</dt><dd>1200</dd>" in page and "<dt>Full name</dt><dd>Ada Lovelace</dd>" in page
    )


def test_starting_a_case_needs_cases_create_in_ones_own_tenant(
    api, admin_user, tenant, make_user, other_tenant
):
    from casemgmt.accounts.models import User

    key = claim_type(api, admin_user)
    reader = signed_in(make_user(tenant, permissions=["cases:read"]))
    assert reader.get(f"/console/cases/new?type={key}").status_code == 403
    assert start(reader, key).status_code == 403
    assert "/console/cases/new" not in reader.get("/console/cases").content.decode()
    stranger = signed_in(User.objects.get(tenant=other_tenant, roles__name="admin"))
    assert stranger.get(f"/console/cases/new?type={key}").status_code == 404
    assert start(stranger, key).status_code == 404
    anonymous = start(signed_in(admin_user).__class__(), key)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/console/login")
    assert not Case.objects.filter(case_type__key=key).exists()


def started(api, admin, key: str) -> dict[str, Any]:
    body = {
        "case_type_key": key,
        "case_data": {"amount_claimed": 80, "due_from": "2026-12-01", "claimant": {"name": "Bo"}},
    }
    return ok(api(admin).post("/cases", body, format="json"), 201)


def test_closing_with_an_outcome_after_the_last_step(api, admin_user):
    key = claim_type(api, admin_user, outcomes=["paid", "rejected"])
    case = started(api, admin_user, key)
    client = signed_in(admin_user)
    url = f"/console/cases/{case['id']}"
    page = client.get(url).content.decode()
    assert re.search(r'<svg class="dag"[^>]*aria-label="Workflow"', page)
    assert 'data-node="review" data-status="active"' in page and "task · Active" in page
    assert "ready to close" not in page
    task = f"/console/tasks/{case['id']}/review"
    assert client.post(task + "/claim").status_code == 302
    assert client.post(task, {"approved_amount": "75"}).status_code == 302
    page = client.get(url).content.decode()
    assert "“Review claim” completed." in page
    assert 'data-node="review" data-status="completed"' in page
    assert "<dt>Approved amount</dt><dd>75</dd>" in page  # the step's result, by its title
    assert "ready to close" in page and '<option value="paid">' in page
    # The audit names people, not ids.
    assert admin_user.email in page or admin_user.display_name in page
    assert f'<td data-label="Actor">{admin_user.id}</td>' not in page
    refused = client.post(url + "/close", {"outcome": "lost"})
    assert refused.status_code == 302
    assert "Not closed: choose one of the outcomes offered." in client.get(url).content.decode()
    assert client.post(url + "/close", {"outcome": "paid", "reason": "settled"}).status_code == 302
    stored = Case.objects.get(pk=case["id"])
    assert (stored.status, stored.outcome, stored.status_reason) == ("closed", "paid", "settled")
    page = client.get(url).content.decode()
    assert "closed." in page and "outcome: <strong>paid</strong>" in page
    assert f'action="/console/cases/{case["id"]}/close"' not in page  # nothing left to finish
    again = client.post(url + "/cancel", {"reason": "too late"})
    assert (
        again.status_code == 302
        and "Not cancelled: the case is no longer active." in client.get(url).content.decode()
    )


def test_cancelling_needs_a_reason(api, admin_user):
    key = claim_type(api, admin_user)
    case = started(api, admin_user, key)
    client = signed_in(admin_user)
    url = f"/console/cases/{case['id']}"
    client.post(url + "/cancel", {"reason": " "})
    assert Case.objects.get(pk=case["id"]).status == "active"
    assert client.post(url + "/cancel", {"reason": "duplicate of another claim"}).status_code == 302
    stored = Case.objects.get(pk=case["id"])
    assert (stored.status, stored.status_reason) == ("cancelled", "duplicate of another claim")
    assert CaseStep.objects.get(case_id=case["id"], step_id="review").status != "active"


def test_close_and_cancel_need_cases_update_in_ones_own_tenant(
    api, admin_user, tenant, make_user, other_tenant
):
    from django.test import Client

    from casemgmt.accounts.models import User

    key = claim_type(api, admin_user)
    case = started(api, admin_user, key)
    url = f"/console/cases/{case['id']}"
    reader = signed_in(make_user(tenant, permissions=["cases:read"]))
    assert "/close" not in reader.get(url).content.decode()
    stranger = signed_in(User.objects.get(tenant=other_tenant, roles__name="admin"))
    for action in ("/close", "/cancel"):
        assert reader.post(url + action, {"reason": "x", "outcome": "x"}).status_code == 403
        assert stranger.post(url + action, {"reason": "x", "outcome": "x"}).status_code == 404
        anonymous = Client().post(url + action, {"reason": "x"})
        assert anonymous.status_code == 302 and anonymous["Location"].startswith("/console/login")
    assert Case.objects.get(pk=case["id"]).status == "active"


def test_reassign_and_escalate_from_the_task_page(api, admin_user, tenant, make_user, other_tenant):
    from django.test import Client

    from casemgmt.accounts.models import User

    key = claim_type(api, admin_user)
    case = started(api, admin_user, key)
    colleague = make_user(
        tenant, permissions=["tasks:read", "tasks:claim", "tasks:complete"], display_name="Colin"
    )
    task = f"/console/tasks/{case['id']}/review"
    client = signed_in(admin_user)
    page = client.get(task).content.decode()
    assert "Unclaimed" in page and "Case data" in page and "<dt>Amount claimed</dt><dd>80</dd>" in page
    assert f'<option value="{colleague.id}">Colin</option>' in page
    moved = client.post(task + "/reassign", {"assignTo": str(colleague.id)})
    assert moved.status_code == 302
    assert CaseStep.objects.get(case_id=case["id"], step_id="review").assigned_to_id == colleague.id
    page = client.get(task).content.decode()
    assert "“Review claim” is now with Colin." in page and '<dd id="task-holder">Colin</dd>' in page
    assert client.post(task + "/escalate", {"reason": "Over the limit"}).status_code == 302
    row = CaseStep.objects.get(case_id=case["id"], step_id="review")
    assert row.escalated and row.escalation_reason == "Over the limit"
    reader = signed_in(make_user(tenant, permissions=["tasks:read"]))
    assert "/reassign" not in reader.get(task).content.decode()
    stranger = signed_in(User.objects.get(tenant=other_tenant, roles__name="admin"))
    for action, body in (("/reassign", {"assignTo": str(admin_user.id)}), ("/escalate", {"reason": "x"})):
        assert reader.post(task + action, body).status_code == 403
        assert stranger.post(task + action, body).status_code == 404
        anonymous = Client().post(task + action, body)
        assert anonymous.status_code == 302 and anonymous["Location"].startswith("/console/login")
    assert CaseStep.objects.get(case_id=case["id"], step_id="review").assigned_to_id == colleague.id


def test_case_list_search_and_audit_are_paged(api, admin_user):
    from casemgmt.accounts.services import preferences_update

    key = claim_type(api, admin_user)
    ids = [started(api, admin_user, key)["id"] for _ in range(3)]
    preferences_update(user=admin_user, changes={"itemsPerPage": 2})
    client = signed_in(admin_user)
    first = client.get("/console/cases").content.decode()
    assert "1–2 of 3" in first and 'href="?page=2"' in first
    second = client.get("/console/cases?page=2").content.decode()
    assert "3–3 of 3" in second and 'rel="prev"' in second and 'rel="next"' not in second
    assert client.get("/console/cases?page=99").status_code == 200  # past the end: the last page
    task = f"/console/tasks/{ids[0]}/review"
    assert client.post(task + "/claim").status_code == 302
    assert client.post(task + "/escalate", {"reason": "needs a second look"}).status_code == 302
    events = client.get(f"/console/cases/{ids[0]}").content.decode()
    assert re.search(r"1–2 of \d+", events) and "events=2#h-audit" in events


def test_search_highlights_matches_without_trusting_the_data(api, admin_user):
    key = claim_type(api, admin_user)
    body = {
        "case_type_key": key,
        "case_data": {
            "amount_claimed": 5,
            "due_from": "2026-12-01",
            "claimant": {"name": "<script>alert(1)</script> Zebulon"},
        },
    }
    ok(api(admin_user).post("/cases", body, format="json"), 201)
    page = signed_in(admin_user).get("/console/cases?q=Zebulon").content.decode()
    assert "<mark>Zebulon</mark>" in page, page
    assert "<script>alert(1)</script>" not in page and "1–1 of 1" in page


def test_console_errors_are_pages_and_api_errors_stay_json(admin_user):
    client = signed_in(admin_user)
    missing = client.get("/console/no-such-page")
    assert missing.status_code == 404 and missing["Content-Type"].startswith("text/html")
    assert (
        "Page not found" in missing.content.decode() and 'href="/console/cases"' in missing.content.decode()
    )
    api_missing = client.get("/no-such-route")
    assert api_missing.status_code == 404 and api_missing.json()["code"] == "not_found"


def test_navigation_marks_the_current_page(admin_user):
    page = signed_in(admin_user).get("/console/cases").content.decode()
    assert re.search(r'<a href="/console/cases" aria-current="page">', page)
    assert 'href="/console/" aria-current' not in page
    assert 'rel="icon" href="/static/console/favicon.svg"' in page


def test_dashboard_without_closed_cases_says_so(api, admin_user):
    key = claim_type(api, admin_user)
    started(api, admin_user, key)
    page = signed_in(admin_user).get("/console/dashboard").content.decode()
    assert page.count("No closed cases yet") == 2 and " s</dd>" not in page and "100 %" not in page
    assert '"Motor claim"' in page  # the type chart names the case type, not its key


def test_the_holder_releases_a_task(api, admin_user, tenant, make_user, other_tenant):
    from django.test import Client

    from casemgmt.accounts.models import User

    key = claim_type(api, admin_user)
    case = started(api, admin_user, key)
    task = f"/console/tasks/{case['id']}/review"
    worker = make_user(tenant, permissions=["tasks:read", "tasks:claim", "tasks:complete"])
    holder = signed_in(worker)
    assert "/release" not in holder.get(task).content.decode()  # nothing to release while unclaimed
    assert holder.post(task + "/claim").status_code == 302
    assert "Release Review claim for case" in holder.get(task).content.decode()
    other = signed_in(make_user(tenant, permissions=["tasks:read", "tasks:claim"]))
    assert "/release" not in other.get(task).content.decode()
    assert other.post(task + "/release").status_code == 403  # neither the holder nor tasks:assign
    stranger = signed_in(User.objects.get(tenant=other_tenant, roles__name="admin"))
    assert stranger.post(task + "/release").status_code == 404
    anonymous = Client().post(task + "/release")
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/console/login")
    assert CaseStep.objects.get(case_id=case["id"], step_id="review").assigned_to_id == worker.id
    assert holder.post(task + "/release").status_code == 302
    assert CaseStep.objects.get(case_id=case["id"], step_id="review").assigned_to_id is None
    assert "“Review claim” released" in holder.get(task).content.decode()
