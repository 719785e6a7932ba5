"""Writes of the vault: upload, delete, download and signed-URL records (each audited), and the
erasure requests whose jobs run in `casemgmt.vault.erasure`."""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

from django.db import IntegrityError, transaction

from casemgmt.accounts.models import User
from casemgmt.audit.services import record
from casemgmt.vault.blobs import blob_release, blob_store
from casemgmt.vault.models import Document, Erasure
from casemgmt.vault.queue import enqueue_erasure
from casemgmt.vault.selectors import tenant_of
from casemgmt.vault.tokens import SignedToken, token_issue
from casemgmt.vault.uploads import HashedUpload, sanitize_filename
from shared.api.errors import InvalidState, NotFound
from shared.api.time import iso, now_ms

if TYPE_CHECKING:
    from casemgmt.cases.models import Case


@transaction.atomic
def document_upload(
    *, user: User, upload: HashedUpload, case: Case | None = None, description: str = ""
) -> Document:
    blob = blob_store(upload=upload)
    document = Document.objects.create(
        tenant_id=tenant_of(user),
        case=case,
        blob=blob,
        filename=sanitize_filename(upload.name or ""),
        mime_type=upload.detected_type(),
        size=upload.length,
        description=description,
        uploaded_at=now_ms(),
        uploaded_by=user,
    )
    record(
        tenant_id=document.tenant_id,
        actor=str(user.id),
        action="document:uploaded",
        resource=document.audit_resource,
        changes={
            "filename": document.filename,
            "mimeType": document.mime_type,
            "size": document.size,
            "contentHash": document.content_hash,
            "caseId": str(document.case_id) if document.case_id else None,
        },
    )
    return document


@transaction.atomic
def document_delete(*, user: User, document: Document) -> None:
    sha256 = document.blob_id
    record(
        tenant_id=document.tenant_id,
        actor=str(user.id),
        action="document:deleted",
        resource=document.audit_resource,
        changes={"filename": document.filename, "contentHash": document.content_hash},
    )
    document.delete()
    # After commit, in its own transaction: the release must see this deletion committed.
    transaction.on_commit(lambda: blob_release(sha256=sha256))


@transaction.atomic
def document_signed_url(*, user: User, document: Document) -> SignedToken:
    signed = token_issue(document_id=document.id, tenant_id=document.tenant_id, issued_by=user.id)
    record(
        tenant_id=document.tenant_id,
        actor=str(user.id),
        action="document:signed_url",
        resource=document.audit_resource,
        changes={"expiresAt": iso(signed.expires_at)},
    )
    return signed


@transaction.atomic
def document_record_download(*, actor: str, document: Document, via: str) -> None:
    """`via` is how the bytes were reached: `api` (an authenticated download) or `signed_url`."""
    record(
        tenant_id=document.tenant_id,
        actor=actor,
        action="document:downloaded",
        resource=document.audit_resource,
        changes={"via": via},
    )


@transaction.atomic
def erasure_request(*, user: User, subject_id: UUID, reason: str, scope: str) -> Erasure:
    """Records the request and queues the job; an unfinished job of the same scope for the same
    principal is answered instead of starting a second one."""
    tenant_id = tenant_of(user)
    # Erasure never leaves the caller's tenant: another tenant's principal is not found.
    subject = User.objects.filter(tenant_id=tenant_id, id=subject_id).first()
    if subject is None:
        raise NotFound("User not found.")
    if scope == Erasure.FULL and subject.pk == user.pk:
        raise InvalidState("You cannot erase your own account.")
    unfinished = Erasure.objects.filter(
        tenant_id=tenant_id, subject=subject, scope=scope, status__in=[Erasure.PENDING, Erasure.RUNNING]
    )
    try:
        with transaction.atomic():
            erasure = Erasure.objects.create(
                tenant_id=tenant_id,
                subject=subject,
                requested_by=user,
                scope=scope,
                reason=reason,
                requested_at=now_ms(),
            )
    except IntegrityError:  # an unfinished job exists (perhaps created a moment ago by a twin request)
        return unfinished.get()
    event = record(
        tenant_id=tenant_id,
        actor=str(user.id),
        action="erasure:requested",
        resource=f"erasures/{erasure.id}",
        changes={"userId": str(subject.id), "scope": scope, "reason": reason},
    )
    Erasure.objects.filter(id=erasure.id).update(request_sequence=event.sequence)
    erasure.request_sequence = event.sequence
    # robust: a broker outage after commit is logged, not answered as an error; the periodic
    # resume scan queues the job again.
    transaction.on_commit(lambda: enqueue_erasure(erasure.id), robust=True)
    return erasure
