"""Documents the service makes itself (a generated PDF) rather than receives from a person: stored
in the vault like an upload, filed under their case, audited with the generator as actor."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from casemgmt.audit.models import AuditEvent
from casemgmt.audit.services import record
from casemgmt.cases.models import Case
from casemgmt.vault.blobs import blob_store
from casemgmt.vault.models import Document
from casemgmt.vault.uploads import HashedUpload, sanitize_filename
from shared.api.errors import NotFound
from shared.api.time import now_ms


@transaction.atomic
def document_generated_save(
    *, tenant_id: Any, case_id: Any, content: bytes, filename: str, generated_by: str, description: str = "",
    idempotency_key: str = "",
) -> Document:  # fmt: skip
    """`generated_by` names the generator (`connector:pdf:<step id>`); it is the audit actor and the
    document has no uploading user. A second call with the same `idempotency_key` (a step run again
    after its worker died between saving and reporting) answers the document saved the first time."""
    case = Case.objects.select_for_update(no_key=True).filter(tenant_id=tenant_id, id=case_id).first()
    if case is None:
        raise NotFound("Case not found.")
    earlier = saved_before(case=case, idempotency_key=idempotency_key)
    if earlier is not None:
        return earlier
    upload = HashedUpload.from_bytes(content, name=filename)
    try:
        blob = blob_store(upload=upload)
        document = Document.objects.create(
            tenant_id=tenant_id,
            case=case,
            blob=blob,
            filename=sanitize_filename(filename),
            mime_type=upload.detected_type(),
            size=upload.length,
            description=description,
            uploaded_at=now_ms(),
            uploaded_by=None,
        )
    finally:
        upload.close()
    record(
        tenant_id=tenant_id,
        actor=generated_by,
        action="document:uploaded",
        resource=document.audit_resource,
        changes={
            "filename": document.filename,
            "mimeType": document.mime_type,
            "size": document.size,
            "contentHash": document.content_hash,
            "caseId": str(case.id),
            "generatedBy": generated_by,
            "idempotencyKey": idempotency_key,
        },
    )
    return document


def saved_before(*, case: Case, idempotency_key: str) -> Document | None:
    """The document an earlier call with this key saved, found through its audit event (the
    case's row lock, held by the caller, orders two such calls)."""
    if not idempotency_key:
        return None
    event = (
        AuditEvent.objects.filter(
            tenant_id=case.tenant_id,
            action="document:uploaded",
            resource__startswith=f"cases/{case.id}/documents/",
            changes__idempotencyKey=idempotency_key,
        )
        .only("resource")
        .first()
    )
    if event is None:
        return None
    return Document.objects.filter(case=case, id=event.resource.rsplit("/", 1)[-1]).first()
