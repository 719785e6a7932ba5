"""Reads of documents, always scoped to the caller's tenant (another tenant's document is a 404)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from uuid import UUID

from django.db.models import Q, QuerySet

from casemgmt.accounts.models import User
from casemgmt.cases.selectors import team_access_q
from casemgmt.vault.models import Document, Erasure
from casemgmt.vault.tokens import TokenClaims
from shared.api.errors import NotFound, PermissionDenied
from shared.auth.permissions import has_permission

if TYPE_CHECKING:
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
    """The document if it belongs to the caller's tenant (and to `case`, when given); else 404.
    A document of a case the caller may not see (its case type's accessTeams) is as absent as the
    case: the join below reads the case row, which PostgreSQL's team policy hides from non-members
    (`created_at` is a column of the case, so the join is not trimmed), and SQLite filters here."""
    documents = Document.objects.filter(
        Q(case__isnull=True) | (Q(case__created_at__isnull=False) & team_access_q(user, "case__")),
        tenant_id=tenant_of(user),
        id=document_id,
    )
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
    _require_issuer_still_entitled(claims)
    return document


def _require_issuer_still_entitled(claims: TokenClaims) -> None:
    """A link lends its issuer's access and never more of it than the issuer still has: once the
    issuer is disabled, deleted, moved out of the tenant or no longer holds `vault:read`, the link
    is refused like a tampered one (403). Disabling an agent is how its API key is revoked."""
    issuer_id = _uuid_or_none(claims.issued_by)
    issuer = (
        User.objects.prefetch_related("roles")
        .filter(id=issuer_id, tenant_id=claims.tenant_id, is_active=True)
        .first()
        if issuer_id is not None
        else None
    )
    if issuer is None or not has_permission(issuer.get_permission_strings(), "vault:read"):
        raise PermissionDenied("The download link was revoked: its issuer can no longer read this document.")


def _uuid_or_none(value: str) -> UUID | None:
    try:
        return UUID(value)
    except ValueError:
        return None


def access_erasure(*, user: User, erasure_id: Any, scope: str | None = None) -> Erasure:
    erasures = Erasure.objects.filter(tenant_id=tenant_of(user), id=erasure_id)
    if scope is not None:
        erasures = erasures.filter(scope=scope)
    erasure = erasures.first()
    if erasure is None:
        raise NotFound("Erasure not found.")
    return erasure
