"""Signed download tokens: bound to one document of one tenant, stamped with their issue time and
signed with the service's secret (django.core.signing), so they cannot be forged, altered, moved
to another document or tenant, or used after they expire."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core import signing

from shared.api.errors import PermissionDenied
from shared.api.time import now_ms

SALT = "casemgmt.vault.signed-download"


@dataclass(frozen=True)
class SignedToken:
    token: str
    expires_at: datetime


@dataclass(frozen=True)
class TokenClaims:
    document_id: str
    tenant_id: str
    issued_by: str


def token_issue(*, document_id: Any, tenant_id: Any, issued_by: Any) -> SignedToken:
    value = {"d": str(document_id), "t": str(tenant_id), "u": str(issued_by)}
    token = signing.TimestampSigner(salt=SALT).sign_object(value, compress=False)
    return SignedToken(
        token=token, expires_at=now_ms() + timedelta(seconds=settings.VAULT_SIGNED_URL_SECONDS)
    )


def token_check(*, token: str, document_id: Any) -> TokenClaims:
    """The claims of a valid token for this document; 403 for any token that is not one."""
    try:
        value = signing.TimestampSigner(salt=SALT).unsign_object(
            token, max_age=timedelta(seconds=settings.VAULT_SIGNED_URL_SECONDS)
        )
    except signing.SignatureExpired:
        raise PermissionDenied("The download link has expired.") from None
    except (signing.BadSignature, ValueError, TypeError):
        raise PermissionDenied("The download link is not valid.") from None
    if not isinstance(value, dict) or value.get("d") != str(document_id):
        raise PermissionDenied("The download link is not valid for this document.")
    return TokenClaims(document_id=value["d"], tenant_id=str(value.get("t")), issued_by=str(value.get("u")))
