"""PDF generation: an HTML template with inline CSS, rendered with the case's template variables,
laid out by WeasyPrint and saved as a document of the case in the vault.

The template is either a stored template named by `template` (its text rendered here, with every
string value HTML-escaped so case data cannot inject markup) or ready HTML given as `html` (an input
whose expressions the framework has already rendered). WeasyPrint may load nothing from the network
or the file system: only `data:` URLs resolve, so a template cannot reach an inner address or read
a local file.
"""

from __future__ import annotations

import html as htmllib
from typing import Any

from casemgmt.cases.models import Case
from casemgmt.connectors.base import Action, Connector, ConnectorError, Input, InvocationContext, Result
from casemgmt.prompts.selectors import prompt_template_get_or_none
from casemgmt.templating.renderer import TemplateError, render
from casemgmt.vault.generated import document_generated_save
from casemgmt.vault.models import Document
from casemgmt.workflows.engine import template_context

MAX_PDF_BYTES = 20 * 1024 * 1024


class PdfConnector(Connector):
    key = "pdf"
    display_name = "PDF document"
    description = "Renders an HTML template with inline CSS to PDF and saves it to the case's documents."
    requires_auth = False
    actions = {
        "generate_pdf": Action(
            "generate_pdf",
            "Generate PDF",
            {
                "template": Input("string", description="Name of a stored template holding the HTML."),
                "html": Input("string", description="The HTML itself, when no stored template is named."),
                "filename": Input("string", default="document.pdf"),
                "description": Input("string"),
            },
        ),
    }

    def check_inputs(self, action: str, inputs: dict[str, Any]) -> list[dict[str, str]]:
        if bool(inputs.get("template")) == bool(inputs.get("html")):
            return [
                {
                    "field": "template",
                    "error": "give exactly one of template (a stored template name) or html",
                }
            ]
        return []

    def invoke(
        self, action: str, inputs: dict[str, Any], config: dict[str, Any], context: InvocationContext
    ) -> Result:
        source = inputs.get("html") or render_stored(context, str(inputs["template"]))
        content = to_pdf(source)
        filename = pdf_filename(str(inputs.get("filename") or "document.pdf"))
        if context.case_id is None:
            # A test call has no case to file the document under: it shows what would be saved.
            body = {"filename": filename, "size": len(content), "saved": False}
            return Result(200, body, output=body)
        document = save_document(
            context, content=content, filename=filename, description=inputs.get("description")
        )
        body = {
            "documentId": str(document.id), "filename": document.filename, "size": document.size,
            "contentHash": document.content_hash, "mimeType": document.mime_type, "saved": True,
        }  # fmt: skip
        return Result(201, body, output=body)


def render_stored(context: InvocationContext, name: str) -> str:
    stored = prompt_template_get_or_none(tenant_id=context.tenant_id, name=name)
    if stored is None:
        raise ConnectorError("invalid_input", f"pdf: no stored template named {name!r}")
    try:
        return render(stored.template, escaped(variables(context)))
    except TemplateError as exc:
        raise ConnectorError("invalid_input", f"pdf: template {name!r} does not render: {exc}") from exc


def variables(context: InvocationContext) -> dict[str, Any]:
    """The template variables: those handed over by the caller, else (a step run by a worker) the
    case as it is now, so the document shows the case at the time it was generated."""
    if "case_data" in context.template_context or context.case_id is None:
        return context.template_context
    case = Case.objects.filter(tenant_id=context.tenant_id, id=context.case_id).first()
    if case is None:
        raise ConnectorError("invalid_input", "pdf: the case no longer exists")
    return template_context(case)


def escaped(value: Any) -> Any:
    """The template variables with every string HTML-escaped (keys kept as they are)."""
    if isinstance(value, str):
        return htmllib.escape(value)
    if isinstance(value, dict):
        return {key: escaped(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [escaped(item) for item in value]
    return value


def to_pdf(source: str) -> bytes:
    # Not an import loop: WeasyPrint loads fonts and native libraries on import, so only PDF
    # generation pays for it, not every process that lists the connectors.
    from weasyprint import HTML
    from weasyprint.urls import URLFetcher

    fetcher = URLFetcher(allowed_protocols=["data"], allow_redirects=False, timeout=1)
    try:
        content = HTML(string=source, base_url=None, url_fetcher=fetcher).write_pdf()
    except Exception as exc:  # WeasyPrint raises many types for malformed documents
        raise ConnectorError(
            "render_error", f"pdf: the HTML could not be laid out: {exc.__class__.__name__}"
        ) from exc
    if not content or len(content) > MAX_PDF_BYTES:
        raise ConnectorError(
            "render_error", f"pdf: the document is empty or larger than {MAX_PDF_BYTES} bytes"
        )
    return bytes(content)


def pdf_filename(name: str) -> str:
    name = name.strip() or "document.pdf"
    return name if name.lower().endswith(".pdf") else f"{name}.pdf"


def save_document(context: InvocationContext, *, content: bytes, filename: str, description: Any) -> Document:
    return document_generated_save(
        tenant_id=context.tenant_id, case_id=context.case_id, content=content, filename=filename,
        description=str(description or ""), generated_by=f"connector:pdf:{context.step_id or 'test'}",
        idempotency_key=context.idempotency_key,
    )  # fmt: skip


CONNECTOR = PdfConnector()
