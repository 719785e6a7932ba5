"""Console pages as the owner, a member lacking the permission, another tenant and anonymous."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from casemgmt.audit.models import AuditEvent
from casemgmt.tenancy.models import DEFAULT_TERMINOLOGY
from casemgmt.vault.models import Document
from casemgmt.workflows.models import CaseStep
from tests.casemgmt.conftest import PASSWORD
from tests.casemgmt.console.conftest import signed_in

pytestmark = pytest.mark.django_db


def pages(case_id: str) -> list[str]:
    return [
        "/console/",
        "/console/cases",
        "/console/cases?q=window",
        f"/console/cases/{case_id}",
        f"/console/tasks/{case_id}/review",
    ]


def test_anonymous_is_sent_to_the_login_page(waiting_case):
    client = Client()
    for url in pages(waiting_case["id"]):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/console/login?next=%2Fconsole%2F")
    claim = client.post(f"/console/tasks/{waiting_case['id']}/review/claim")
    assert claim.status_code == 302
    assert not CaseStep.objects.filter(case_id=waiting_case["id"], assigned_to__isnull=False).exists()


def test_login_page_rejects_a_wrong_password_and_needs_csrf(admin_user):
    response = Client().post("/console/login", {"email": admin_user.email, "password": "wrong"})
    assert response.status_code == 401
    assert b"Invalid email or password." in response.content
    strict = Client(enforce_csrf_checks=True)
    assert strict.post("/console/login", {"email": admin_user.email, "password": PASSWORD}).status_code == 403


def test_owner_sees_every_page_with_the_tenant_branding(waiting_case, admin_user):
    client = signed_in(admin_user)
    for url in pages(waiting_case["id"]):
        response = client.get(url)
        assert response.status_code == 200, url
        assert admin_user.tenant.branding.company_name.encode() in response.content
        assert "Content-Security-Policy" in response
    inbox = client.get("/console/").content.decode()
    assert "Review claim" in inbox and waiting_case["caseNumber"] in inbox
    case = client.get(f"/console/cases/{waiting_case['id']}").content.decode()
    assert "Broken window" in case and "Review claim" in case and "Audit trail" in case
    assert waiting_case["caseNumber"] in client.get("/console/cases?q=window").content.decode()


def test_terminology_and_theme_reach_the_page(waiting_case, admin_user, api):
    admin = api(admin_user)
    assert (
        admin.put(
            "/tenant/terminology",
            {**DEFAULT_TERMINOLOGY, "case": "Claim file", "inbox": "Work queue"},
            format="json",
        ).status_code
        == 200
    )
    theme = {"name": "House", "isDefault": True, "cssVariables": {"--primary": "#123456"}}
    assert admin.post("/tenant/themes", theme, format="json").status_code == 201
    page = signed_in(admin_user).get(f"/console/cases/{waiting_case['id']}").content.decode()
    assert "Claim file" in page and "Work queue" in page
    assert "--primary: #123456;" in page


def test_claim_then_complete_shows_the_servers_validation_messages(waiting_case, admin_user):
    client = signed_in(admin_user)
    task_url = f"/console/tasks/{waiting_case['id']}/review"
    assert client.post(task_url + "/claim").status_code == 302
    row = CaseStep.objects.get(case_id=waiting_case["id"], step_id="review")
    assert row.assigned_to_id == admin_user.id
    bad = client.post(task_url, {"amount": "0", "channel": "mail"})
    assert bad.status_code == 400
    assert b"Amount must be at least 1" in bad.content
    row.refresh_from_db()
    assert row.status == CaseStep.ACTIVE
    done = client.post(task_url, {"amount": "5", "approved": "on", "channel": "phone"})
    assert done.status_code == 302 and done["Location"] == f"/console/cases/{waiting_case['id']}"
    row.refresh_from_db()
    assert row.status == CaseStep.COMPLETED
    assert row.result == {"amount": 5, "approved": True, "channel": "phone"}
    actions = AuditEvent.objects.filter(tenant_id=admin_user.tenant_id).values_list("action", flat=True)
    assert {"task:claimed", "task:completed"} <= set(actions)


def test_required_field_message_is_shown_on_its_field(waiting_case, admin_user):
    response = signed_in(admin_user).post(f"/console/tasks/{waiting_case['id']}/review", {"approved": "on"})
    assert response.status_code == 400
    assert b'id="e-f-amount"' in response.content
    assert b"Amount is required" in response.content


def test_audit_verify_button_checks_the_chain(waiting_case, admin_user):
    response = signed_in(admin_user).post(f"/console/cases/{waiting_case['id']}/audit/verify")
    assert response.status_code == 200
    assert b"The audit trail is intact" in response.content
    assert AuditEvent.objects.filter(tenant_id=admin_user.tenant_id, action__contains="verif").exists()


def test_member_lacking_the_permission_is_refused(waiting_case, tenant, make_user):
    reader = signed_in(make_user(tenant, permissions=["cases:read"]))
    case_id = waiting_case["id"]
    assert reader.get("/console/").status_code == 403
    assert reader.get(f"/console/tasks/{case_id}/review").status_code == 403
    assert reader.post(f"/console/tasks/{case_id}/review/claim").status_code == 403
    assert reader.post(f"/console/cases/{case_id}/audit/verify").status_code == 403
    page = reader.get(f"/console/cases/{case_id}").content.decode()
    assert "Audit trail" not in page and "Documents" not in page  # audit:read and vault:read lacking
    worker = signed_in(make_user(tenant, permissions=["tasks:read"]))
    assert worker.get("/console/cases").status_code == 403
    assert worker.get(f"/console/cases/{case_id}").status_code == 403
    assert (
        worker.post(f"/console/tasks/{case_id}/review", {"amount": "5", "approved": "on"}).status_code == 403
    )
    assert CaseStep.objects.get(case_id=case_id, step_id="review").status == CaseStep.ACTIVE


def test_another_tenant_sees_nothing(waiting_case, other_tenant):
    from casemgmt.accounts.models import User

    outsider = signed_in(User.objects.get(tenant=other_tenant, roles__name="admin"))
    case_id = waiting_case["id"]
    assert outsider.get(f"/console/cases/{case_id}").status_code == 404
    assert outsider.get(f"/console/tasks/{case_id}/review").status_code == 404
    assert outsider.post(f"/console/tasks/{case_id}/review/claim").status_code == 404
    assert outsider.post(f"/console/cases/{case_id}/audit/verify").status_code == 404
    assert waiting_case["caseNumber"] not in outsider.get("/console/").content.decode()
    assert waiting_case["caseNumber"] not in outsider.get("/console/cases").content.decode()


def _upload(client, case_id: str, content: bytes = b"%PDF-1.4 claim form"):
    file = SimpleUploadedFile("claim.pdf", content, content_type="application/pdf")
    return client.post(f"/console/cases/{case_id}/documents", {"file": file, "description": "Signed form"})


def test_owner_uploads_and_downloads_a_document(waiting_case, admin_user):
    client = signed_in(admin_user)
    response = _upload(client, waiting_case["id"])
    assert response.status_code == 302
    document = Document.objects.get(case_id=waiting_case["id"])
    assert (document.filename, document.description, document.uploaded_by_id) == (
        "claim.pdf",
        "Signed form",
        admin_user.id,
    )
    assert "claim.pdf" in client.get(f"/console/cases/{waiting_case['id']}").content.decode()
    download = client.get(f"/console/documents/{document.id}/download")
    assert download.status_code == 200
    assert b"".join(download.streaming_content) == b"%PDF-1.4 claim form"
    actions = set(AuditEvent.objects.filter(tenant_id=admin_user.tenant_id).values_list("action", flat=True))
    assert any("download" in a for a in actions) and any("upload" in a for a in actions)


def test_upload_needs_csrf_a_file_and_the_permission(waiting_case, admin_user, tenant, make_user):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(admin_user, backend="casemgmt.accounts.backends.EmailBackend")
    assert _upload(strict, waiting_case["id"]).status_code == 403
    client = signed_in(admin_user)
    missing = client.post(f"/console/cases/{waiting_case['id']}/documents", {"description": "x"})
    assert missing.status_code == 400 and b"file is required" in missing.content
    reader = signed_in(make_user(tenant, permissions=["cases:read", "vault:read"]))
    assert _upload(reader, waiting_case["id"]).status_code == 403
    assert not Document.objects.filter(case_id=waiting_case["id"]).exists()


def test_documents_are_tenant_scoped(waiting_case, admin_user, other_tenant):
    from casemgmt.accounts.models import User

    assert _upload(signed_in(admin_user), waiting_case["id"]).status_code == 302
    document = Document.objects.get(case_id=waiting_case["id"])
    outsider = signed_in(User.objects.get(tenant=other_tenant, roles__name="admin"))
    assert outsider.get(f"/console/documents/{document.id}/download").status_code == 404
    assert _upload(outsider, waiting_case["id"]).status_code == 404
    anonymous = Client().get(f"/console/documents/{document.id}/download")
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/console/login")


def test_the_nav_links_the_api_docs(admin_user):
    client = signed_in(admin_user)
    page = client.get("/console/cases").content.decode()
    nav = page[page.index('<nav aria-label="Main">') : page.index("</nav>")]
    link = nav[nav.index('<a href="/docs" hx-boost="false">') :]
    assert link[: link.index("</a>")].endswith("API docs")
    assert client.get("/docs").status_code == 200
