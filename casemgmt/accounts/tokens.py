"""The case service's JWT configuration and token helpers on top of `shared.auth.tokens`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.utils import timezone

from casemgmt.accounts.models import RevokedToken
from shared.auth import tokens

if TYPE_CHECKING:
    from casemgmt.accounts.models import User

API_KEY_LABEL = "cmk"


def jwt_config() -> tokens.JWTConfig:
    conf = settings.JWT
    return tokens.JWTConfig(
        signing_key=conf["SIGNING_KEY"],
        issuer=conf["ISSUER"],
        audience=conf["AUDIENCE"],
        lifetime=conf["LIFETIME"],
        is_revoked=is_revoked,
    )


def issue_for(user: User) -> tokens.IssuedToken:
    claims = {"tenant": str(user.tenant_id), "gen": user.token_generation}
    return tokens.issue(jwt_config(), subject=str(user.id), claims=claims)


def is_revoked(jti: str) -> bool:
    # One primary-key lookup; the database is the record, so nothing here depends on Redis.
    return RevokedToken.objects.filter(jti=jti).exists()


def revoke(claims: dict[str, Any]) -> None:
    """Remembers the jti until the token would have expired anyway (plus a second of slack)."""
    expires_at = datetime.fromtimestamp(int(claims["exp"]), tz=UTC) + timedelta(seconds=1)
    RevokedToken.objects.get_or_create(jti=claims["jti"], defaults={"expires_at": expires_at})


def purge_expired_revocations() -> int:
    return RevokedToken.objects.filter(expires_at__lte=timezone.now()).delete()[0]
