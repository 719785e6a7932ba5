"""Reads of documents, always scoped to the caller's tenant (another tenant's document is a 404)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from uuid import UUID

from django.db.models import QuerySet

from casemgmt.vault.models import Document, Erasure
from casemgmt.vault.tokens import TokenClaims
from shared.api.errors import NotFound, PermissionDenied

if TYPE_CHECKING:
    from casemgmt.accounts.models import User
    from casemgmt.cases.models import Case


def tenant_of(user: User) -> UUID:
    """API principals always belong to a tenant; a platform operator without one has no vault."""
    if user.tenant_id is None:
        raise NotFound("Document not found.")
    return user.tenant_id


def document_list(*, case: Case) -> QuerySet[Document]:
    """Newest first."""
    return Document.objects.filter(tenant_id=case.tenant_id, case=case).order_by("-uploaded_at", "-id")


def access_document(*, user: User, document_id: Any, case: Case | None = None) -> Document:
    """The document if it belongs to the caller's tenant (and to `case`, when given); else 404."""
    documents = Document.objects.filter(tenant_id=tenant_of(user), id=document_id)
    if case is not None:
        documents = documents.filter(case=case)
    document = documents.first()
    if document is None:
        raise NotFound("Document not found.")
    return document


def document_for_token(*, claims: TokenClaims) -> Document:
    """The document a valid token names: 404 once deleted, 403 when the token was issued for
    another tenant (a token never opens a document outside the tenant it was issued in)."""
    document = Document.objects.select_related("blob").filter(id=claims.document_id).first()
    if document is None:
        raise NotFound("Document not found.")
    if str(document.tenant_id) != claims.tenant_id:
        raise PermissionDenied("The download link is not valid for this document.")
    return document


def access_erasure(*, user: User, erasure_id: Any, scope: str | None = None) -> Erasure:
    erasures = Erasure.objects.filter(tenant_id=tenant_of(user), id=erasure_id)
    if scope is not None:
        erasures = erasures.filter(scope=scope)
    erasure = erasures.first()
    if erasure is None:
        raise NotFound("Erasure not found.")
    return erasure
