"""PDF connector: a stored HTML template rendered with the case's variables, laid out by WeasyPrint,
saved to the case's documents in the vault with its audit event."""

from __future__ import annotations

import io

import pytest
from pypdf import PdfReader

from casemgmt.audit.models import AuditEvent
from casemgmt.cases.services import case_create, case_type_create
from casemgmt.connectors.base import ConnectorError
from casemgmt.connectors.registry import connector_get
from casemgmt.prompts.services import prompt_template_create
from casemgmt.vault.models import Document
from casemgmt.vault.storage import vault_storage
from tests.support.protocols import ProtocolServer, Reply

pytestmark = pytest.mark.django_db

LETTER = """<html><head><style>
  body { font-family: sans-serif; } h1 { color: #1f4e79; font-size: 18pt; }
</style></head><body>
<h1>Decision for {{case_number}}</h1>
<p>Dear {{case_data.applicant.name}},</p>
<p>{{#if (gt case_data.amount 100)}}Your claim needs review.{{else}}Your claim is approved.{{/if}}</p>
<ul>{{#each case_data.tags}}<li>{{this}}</li>{{/each}}</ul>
</body></html>"""


@pytest.fixture
def case(admin_user):
    case_type = case_type_create(
        user=admin_user, key="claim_pdf", display_name="Claim",
        schema={"type": "object", "properties": {"amount": {"type": "number"}}},
    )  # fmt: skip
    data = {"applicant": {"name": "Ada <b>Lovelace</b>"}, "amount": 120, "tags": ["hail", "roof"]}
    return case_create(user=admin_user, case_type=case_type, data=data)


def pdf_text(content: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)


def template_context(case):
    return {"case_data": case.data, "step_results": {}, "case_number": case.case_number, "now": "2026-11-23"}


def test_generated_pdf_is_saved_as_a_document_of_the_case(invoke, admin_user, case):
    prompt_template_create(user=admin_user, name="decision_letter", template=LETTER)
    result, _ = invoke(
        "pdf", "generate_pdf", {"template": "decision_letter", "filename": "decision", "description": "Letter"}, {},
        tenant_id=case.tenant_id, case_id=case.id, step_id="letter", template_context=template_context(case),
    )  # fmt: skip
    body = result.step_result()
    document = Document.objects.get(id=body["documentId"])
    assert (document.case_id, document.filename, document.mime_type) == (
        case.id,
        "decision.pdf",
        "application/pdf",
    )
    assert document.uploaded_by is None and document.description == "Letter"
    assert body == {
        "documentId": str(document.id), "filename": "decision.pdf", "size": document.size,
        "contentHash": document.content_hash, "mimeType": "application/pdf", "saved": True,
    }  # fmt: skip
    with vault_storage().open(document.blob.key) as stored:
        content = stored.read()
    assert content.startswith(b"%PDF-")
    text = pdf_text(content)
    assert f"Decision for {case.case_number}" in text
    assert "Your claim needs review." in text and "hail" in text and "roof" in text
    # Case data is text in the letter, never markup: the name's tags are printed, not applied.
    assert "Dear Ada <b>Lovelace</b>," in text
    event = AuditEvent.objects.get(tenant_id=case.tenant_id, resource=document.audit_resource)
    assert event.action == "document:uploaded" and event.actor == "connector:pdf:letter"
    assert event.changes["generatedBy"] == "connector:pdf:letter"
    assert event.changes["contentHash"] == document.content_hash


def test_a_test_call_without_a_case_saves_nothing(invoke, admin_user):
    result, _ = invoke("pdf", "generate_pdf", {"html": "<p>Preview</p>", "filename": "x.pdf"}, {},
                       tenant_id=admin_user.tenant_id)  # fmt: skip
    assert result.step_result()["saved"] is False and result.step_result()["size"] > 0
    assert not Document.objects.filter(tenant_id=admin_user.tenant_id).exists()


def test_the_template_cannot_fetch_anything(invoke, admin_user, case, loopback_allowed):
    """Images and stylesheets pointing at the network or the file system are never loaded."""
    server = ProtocolServer()
    server.handle = lambda request: Reply(200, "body { color: red }")  # type: ignore[method-assign]
    server.start()
    try:
        html = (
            f'<link rel="stylesheet" href="{server.base_url}/style.css">'
            f'<img src="{server.base_url}/pixel.png"><img src="file:///etc/passwd"><p>Safe</p>'
        )
        result, _ = invoke(
            "pdf", "generate_pdf", {"html": html}, {}, tenant_id=case.tenant_id, case_id=case.id
        )
    finally:
        server.stop()
    assert server.requests == []
    assert result.step_result()["saved"] is True


def test_unknown_stored_template_is_an_input_error(invoke, case):
    with pytest.raises(ConnectorError) as failure:
        invoke("pdf", "generate_pdf", {"template": "missing"}, {}, tenant_id=case.tenant_id, case_id=case.id,
               template_context=template_context(case))  # fmt: skip
    assert failure.value.code == "invalid_input" and not failure.value.transient


def test_exactly_one_of_template_or_html():
    pdf = connector_get("pdf")
    assert pdf.check_inputs("generate_pdf", {"filename": "a.pdf"})[0]["field"] == "template"
    assert pdf.check_inputs("generate_pdf", {"template": "t", "html": "<p/>"})[0]["field"] == "template"


def test_a_step_run_again_with_its_key_does_not_save_a_second_document(invoke, case):
    call = {
        "tenant_id": case.tenant_id,
        "case_id": case.id,
        "step_id": "letter",
        "idempotency_key": "delivery-7",
    }
    first, _ = invoke("pdf", "generate_pdf", {"html": "<p>One</p>"}, {}, **call)
    again, _ = invoke("pdf", "generate_pdf", {"html": "<p>One</p>"}, {}, **call)
    assert again.step_result()["documentId"] == first.step_result()["documentId"]
    assert Document.objects.filter(case=case).count() == 1
    other, _ = invoke(
        "pdf", "generate_pdf", {"html": "<p>One</p>"}, {}, **{**call, "idempotency_key": "delivery-8"}
    )
    assert other.step_result()["documentId"] != first.step_result()["documentId"]
