"""Erasure end to end through the HTTP API, with the job run in this process: the principal's
personal data is gone from cases, drafts, task records, documents and audit payloads; the chain
still verifies, counting the erased entries as redacted; other tenants are untouched."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import pytest

from casemgmt.accounts.models import User
from casemgmt.audit.models import AuditEvent
from casemgmt.cases.models import Case
from casemgmt.vault.erasure import Superseded, _run_step, erasure_claim, erasure_run, report_hash
from casemgmt.vault.models import Document, Erasure
from casemgmt.vault.services import erasure_request
from casemgmt.workflows.models import CaseStep
from tests.casemgmt.conftest import PASSWORD
from tests.casemgmt.vault.conftest import stored_blobs
from tests.casemgmt.vault.test_blob_concurrency import in_threads
from tests.casemgmt.workflows.conftest import Flow, ok, task_step

NAME, EMAIL = "Jane Roe", "jane.roe@example.test"
WORKER_PERMISSIONS = [
    "cases:create", "cases:read", "cases:update", "tasks:read", "tasks:claim", "tasks:complete",
    "vault:upload", "vault:read",
]  # fmt: skip


@pytest.fixture
def subject(tenant, make_user):
    return make_user(tenant, permissions=WORKER_PERMISSIONS, email=EMAIL, display_name=NAME)


@pytest.fixture
def colleague(tenant, make_user):
    return make_user(tenant, permissions=WORKER_PERMISSIONS, display_name="Sam Poe")


@pytest.fixture
def namesake(other_tenant, make_user):
    """Same display name, another tenant."""
    return make_user(
        other_tenant, permissions=WORKER_PERMISSIONS, email="jane.roe@globex.test", display_name=NAME
    )


@pytest.fixture
def world(api, admin_user, subject, colleague, upload, namesake, other_tenant):
    """Cases, tasks, drafts and documents that carry the subject's name and email."""
    flow = Flow(api, admin_user)
    flow.workflow([task_step("review"), task_step("approve")])
    as_subject = api(subject)
    mine = ok(as_subject.post("/cases", {"case_type_key": flow.key, "case_data": {"title": f"Claim of {NAME}", "kind": EMAIL, "amount": 5}}, format="json"), 201)  # fmt: skip
    theirs = flow.case({"title": "Unrelated claim", "amount": 7})
    ok(as_subject.post(f"/tasks/{mine['id']}/review/claim"))
    ok(
        as_subject.post(
            f"/tasks/{mine['id']}/review/draft", {"data": {"note": "call Jane Roe"}}, format="json"
        )
    )
    ok(as_subject.post(f"/tasks/{theirs['id']}/review/complete", {"outcome": "done", "data": {"approved": True, "note": "ok per jane"}}, format="json"))  # fmt: skip
    subject_doc = upload(subject, b"jane's passport scan", case=Case.objects.get(id=mine["id"]), name="jane-roe-passport.pdf").json()  # fmt: skip
    shared_bytes = upload(subject, b"a form both uploaded", name="form.pdf").json()
    colleague_doc = upload(colleague, b"a form both uploaded", case=Case.objects.get(id=mine["id"]), name="form.pdf").json()  # fmt: skip
    # The namesake in the other tenant has a case of its own naming "Jane Roe".
    foreign_flow = Flow(api, User.objects.get(tenant=other_tenant, roles__name="admin"))
    foreign = foreign_flow.case({"title": f"Claim of {NAME}", "kind": namesake.email})
    return {"mine": mine, "theirs": theirs, "subject_doc": subject_doc, "shared": shared_bytes, "colleague_doc": colleague_doc, "foreign": foreign}  # fmt: skip


def request_erasure(api, admin_user, subject, reason="data subject request #42"):
    response = api(admin_user).post(
        "/admin/erasure", {"userId": str(subject.id), "reason": reason}, format="json"
    )
    assert response.status_code == 202, response.content
    return response.json()


def mentions_subject(value) -> bool:
    text = json.dumps(value).lower()
    return "jane.roe@example.test" in text or "jane roe" in text


def test_full_erasure_scrubs_everything_and_the_chain_stays_valid(
    api, admin_user, subject, namesake, world, tenant, vault_root, django_capture_on_commit_callbacks
):
    accepted = request_erasure(api, admin_user, subject)
    assert set(accepted) == {"id", "status"} and accepted["status"] == "pending"
    with django_capture_on_commit_callbacks(execute=True):
        erasure_run(erasure_id=accepted["id"])

    status = ok(api(admin_user).get(f"/admin/erasure/{accepted['id']}"))
    assert status["status"] == "completed"
    report = status["report"]
    assert report["reason"] == "data subject request #42"
    assert report["verificationHash"] == report_hash(report)
    assert {world["mine"]["id"], world["theirs"]["id"]} <= set(report["casesTouched"])
    assert world["foreign"]["id"] not in report["casesTouched"]
    assert report["counts"]["documentsDeleted"] == 2
    assert report["counts"]["draftsRemoved"] == 1

    # Cases, drafts and task records of the tenant no longer name the subject.
    for case in Case.objects.filter(tenant=tenant):
        assert not mentions_subject([case.data, case.display_name, case.search_text]), case.data
        assert case.created_by_id != subject.id
    mine = Case.objects.get(id=world["mine"]["id"])
    assert mine.data["title"] == "Claim of [erased]" and mine.data["kind"] == "[erased]"
    assert mine.version == 2  # the scrub is a data change like any other
    for step in CaseStep.objects.filter(tenant=tenant):
        assert not mentions_subject([step.draft, step.result, step.escalation_reason])
        assert subject.id not in (step.assigned_to_id, step.completed_by_id, step.escalated_to_id)
    assert CaseStep.objects.get(case_id=world["mine"]["id"], step_id="review").draft is None

    # The subject's documents are gone; bytes still referenced by a colleague's document stay.
    assert set(Document.objects.filter(tenant=tenant).values_list("id", flat=True)) == {
        uuid.UUID(world["colleague_doc"]["id"])
    }
    assert [p.read_bytes() for p in stored_blobs(vault_root)] == [b"a form both uploaded"]

    # Audit payloads no longer name it, and the chain verifies with the erased entries redacted.
    for event in AuditEvent.objects.filter(tenant=tenant):
        assert not mentions_subject(event.changes), (event.action, event.changes)
        assert "jane-roe-passport" not in json.dumps(event.changes)
    chain = ok(api(admin_user).get("/audit/verify-chain"))
    assert chain["status"] == "valid"
    assert chain["redacted_entries"] == AuditEvent.objects.filter(tenant=tenant, erased=True).count() > 0
    assert ok(api(admin_user).post(f"/cases/{world['mine']['id']}/events/verify"))["isValid"] is True
    actions = list(AuditEvent.objects.filter(tenant=tenant).values_list("action", flat=True))
    assert "erasure:requested" in actions and "erasure:completed" in actions
    completed = AuditEvent.objects.get(tenant=tenant, action="erasure:completed")
    assert completed.changes["verificationHash"] == report["verificationHash"] and not completed.erased

    # The principal is disabled and anonymised; it can no longer log in.
    subject.refresh_from_db()
    assert not subject.is_active and subject.display_name == "" and subject.email.endswith("@erased.invalid")
    login = api(None).post("/auth/login", {"email": EMAIL, "password": PASSWORD}, format="json")
    assert login.status_code == 401

    # The same-named principal of the other tenant and its case are untouched.
    namesake.refresh_from_db()
    assert namesake.is_active and namesake.display_name == NAME
    foreign = Case.objects.get(id=world["foreign"]["id"])
    assert foreign.data["title"] == f"Claim of {NAME}" and foreign.version == 1


def test_documents_only_erasure_keeps_the_principal_and_its_cases(
    api, tenant, make_user, admin_user, subject, world, django_capture_on_commit_callbacks
):
    deleter = make_user(tenant, permissions=["vault:delete"])
    response = api(deleter).post("/vault/erasure", {"userId": str(subject.id)}, format="json")
    assert response.status_code == 202
    with django_capture_on_commit_callbacks(execute=True):
        erasure_run(erasure_id=response.json()["id"])
    status = ok(api(deleter).get(f"/vault/erasure/{response.json()['id']}"))
    assert status["status"] == "completed"
    assert status["report"]["counts"] == {"auditEventsErased": status["report"]["counts"]["auditEventsErased"], "documentsDeleted": 2, "blobsRemoved": 1}  # fmt: skip
    assert (
        status["report"]["counts"]["auditEventsErased"] >= 3
    )  # uploaded and signed_url events of both files
    assert not Document.objects.filter(uploaded_by=subject).exists()
    assert Document.objects.filter(id=world["colleague_doc"]["id"]).exists()
    subject.refresh_from_db()
    assert subject.is_active and subject.email == EMAIL
    assert Case.objects.get(id=world["mine"]["id"]).data["kind"] == EMAIL
    assert not AuditEvent.objects.filter(changes__filename="jane-roe-passport.pdf").exists()
    assert ok(api(admin_user).get("/audit/verify-chain"))["status"] == "valid"


def test_a_job_cut_short_resumes_at_its_first_undone_step(
    api, admin_user, subject, world, settings, django_capture_on_commit_callbacks
):
    accepted = request_erasure(api, admin_user, subject)
    attempt = erasure_claim(erasure_id=accepted["id"])
    for name in ("disable", "tasks"):
        _run_step(accepted["id"], attempt, name)
    # The first worker is gone: its heartbeat goes stale and the job is claimed again.
    assert erasure_claim(erasure_id=accepted["id"]) is None  # still held while the heartbeat is fresh
    Erasure.objects.filter(id=accepted["id"]).update(heartbeat_at=Erasure.objects.get(id=accepted["id"]).heartbeat_at - timedelta(seconds=settings.ERASURE_LEASE_SECONDS + 1))  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        erasure_run(erasure_id=accepted["id"])
    erasure = Erasure.objects.get(id=accepted["id"])
    assert erasure.status == Erasure.COMPLETED and erasure.attempt == 2
    assert erasure.steps_done == [
        "disable",
        "tasks",
        "cases",
        "audit",
        "documents",
        "blobs",
        "principal",
        "complete",
    ]
    assert erasure.counts["draftsRemoved"] == 1 and erasure.counts["principalsDisabled"] == 1
    # The superseded first attempt can no longer run a step.
    with pytest.raises(Superseded):
        _run_step(accepted["id"], attempt, "audit")
    # Running the finished job again changes nothing.
    erasure_run(erasure_id=accepted["id"])
    assert Erasure.objects.get(id=accepted["id"]).attempt == 2


def test_repeated_request_while_unfinished_answers_the_same_job(api, admin_user, subject):
    first = request_erasure(api, admin_user, subject)
    second = request_erasure(api, admin_user, subject)
    assert first["id"] == second["id"]
    assert AuditEvent.objects.filter(action="erasure:requested").count() == 1


def test_erasure_stays_inside_the_callers_tenant(api, admin_user, namesake, other_tenant, subject):
    response = api(admin_user).post(
        "/admin/erasure", {"userId": str(namesake.id), "reason": "x"}, format="json"
    )
    assert response.status_code == 404
    assert (
        api(admin_user).post("/vault/erasure", {"userId": str(namesake.id)}, format="json").status_code == 404
    )
    accepted = request_erasure(api, admin_user, subject)
    foreign_admin = User.objects.get(tenant=other_tenant, roles__name="admin")
    assert api(foreign_admin).get(f"/admin/erasure/{accepted['id']}").status_code == 404


def test_erasure_permissions_and_validation(api, tenant, make_user, admin_user, subject):
    body = {"userId": str(subject.id), "reason": "x"}
    auditor = make_user(tenant, permissions=["admin:audit", "audit:read", "vault:delete"])
    assert api(auditor).post("/admin/erasure", body, format="json").status_code == 403
    assert api(None).post("/admin/erasure", body, format="json").status_code == 401
    assert api(None).post("/vault/erasure", body, format="json").status_code == 401
    reader = make_user(tenant, permissions=["vault:read", "vault:upload"])
    assert api(reader).post("/vault/erasure", body, format="json").status_code == 403
    accepted = request_erasure(api, admin_user, subject)
    assert api(auditor).get(f"/admin/erasure/{accepted['id']}").status_code == 403
    assert api(None).get(f"/admin/erasure/{accepted['id']}").status_code == 401
    # A full erasure is not visible through the documents-only route.
    assert api(auditor).get(f"/vault/erasure/{accepted['id']}").status_code == 404
    missing_reason = api(admin_user).post("/admin/erasure", {"userId": str(subject.id)}, format="json")
    assert missing_reason.status_code == 400 and missing_reason.json()["details"]["field"] == "reason"
    not_uuid = api(admin_user).post("/admin/erasure", {"userId": "nope", "reason": "x"}, format="json")
    assert not_uuid.status_code == 400
    own = api(admin_user).post("/admin/erasure", {"userId": str(admin_user.id), "reason": "x"}, format="json")
    assert own.status_code == 409


@pytest.mark.django_db(transaction=True)
def test_twin_requests_at_the_same_moment_start_one_job(admin_user, subject):
    def ask() -> Erasure:
        return erasure_request(user=admin_user, subject_id=subject.id, reason="twin", scope=Erasure.FULL)

    jobs = in_threads(ask, ask, ask)
    assert len({job.id for job in jobs}) == 1
    assert Erasure.objects.count() == 1
    assert AuditEvent.objects.filter(action="erasure:requested").count() == 1
