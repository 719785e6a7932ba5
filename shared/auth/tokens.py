"""JWT issue and verify (through simplejwt's TokenBackend), with revocation by `jti`.

Each service passes its own signing key, issuer and audience, so one service's token is never valid
on the other unless they are configured to share them.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.core.cache import caches
from rest_framework_simplejwt.backends import TokenBackend
from rest_framework_simplejwt.exceptions import TokenBackendError

from shared.api import errors

REVOKED_PREFIX = "jwt:revoked:"


@dataclass(frozen=True)
class JWTConfig:
    signing_key: str
    issuer: str | None = None
    audience: str | None = None
    algorithm: str = "HS256"
    verifying_key: str | None = None
    lifetime: timedelta = timedelta(hours=1)
    leeway: int = 0
    cache_alias: str = "default"
    extra: dict[str, Any] = field(default_factory=dict)

    def backend(self) -> TokenBackend:
        return TokenBackend(
            self.algorithm,
            signing_key=self.signing_key,
            verifying_key=self.verifying_key or "",
            audience=self.audience,
            issuer=self.issuer,
            leeway=self.leeway,
        )


@dataclass(frozen=True)
class IssuedToken:
    token: str
    jti: str
    expires_at: datetime


def issue(config: JWTConfig, *, subject: str, claims: dict[str, Any] | None = None) -> IssuedToken:
    now = datetime.now(UTC)
    expires = now + config.lifetime
    jti = uuid.uuid4().hex
    payload = {
        "sub": subject,
        "jti": jti,
        "iat": int(now.timestamp()),
        "exp": int(expires.timestamp()),
        "token_type": "access",
        **(claims or {}),
    }
    if config.issuer:
        payload["iss"] = config.issuer
    if config.audience:
        payload["aud"] = config.audience
    return IssuedToken(
        token=config.backend().encode(payload), jti=jti, expires_at=expires.replace(microsecond=0)
    )


def verify(config: JWTConfig, token: str) -> dict[str, Any]:
    """Returns the claims of a valid, unrevoked token, else raises NotAuthenticated."""
    try:
        # simplejwt annotates `decode` with its Token class, but decodes the encoded string it is given.
        claims = config.backend().decode(token, verify=True)  # type: ignore[arg-type]
    except TokenBackendError:
        raise errors.NotAuthenticated("Token is invalid or expired.") from None
    jti = claims.get("jti")
    if not jti or not claims.get("sub"):
        raise errors.NotAuthenticated("Token is missing required claims.")
    if is_revoked(config, jti):
        raise errors.NotAuthenticated("Token has been revoked.")
    return claims


def revoke(config: JWTConfig, claims: dict[str, Any]) -> None:
    """Remembers the jti until the token would have expired anyway."""
    ttl = max(1, int(claims.get("exp", 0)) - int(datetime.now(UTC).timestamp()) + config.leeway + 1)
    caches[config.cache_alias].set(REVOKED_PREFIX + claims["jti"], 1, timeout=ttl)


def is_revoked(config: JWTConfig, jti: str) -> bool:
    return caches[config.cache_alias].get(REVOKED_PREFIX + jti) is not None


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()
