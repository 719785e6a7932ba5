"""JWT issue and verify (through simplejwt's TokenBackend), with revocation by `jti`.

Each service passes its own signing key, issuer and audience, so one service's token is never valid
on the other unless they are configured to share them. A service that offers logout passes its own
revocation lookup, backed by its database: revocations are security state and must survive a cache
or Redis restart.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import jwt
from rest_framework_simplejwt.backends import TokenBackend
from rest_framework_simplejwt.exceptions import TokenBackendError

from shared.api import errors


@dataclass(frozen=True)
class JWTConfig:
    signing_key: str
    issuer: str | None = None
    audience: str | None = None
    algorithm: str = "HS256"
    verifying_key: str | None = None
    lifetime: timedelta = timedelta(hours=1)
    leeway: int = 0
    # The `token_type` every accepted token must carry; None accepts tokens without one (an outside
    # issuer that does not set it).
    token_type: str | None = "access"  # noqa: S105 - a token type, not a password
    # Answers whether a jti has been revoked; None when the service never revokes tokens.
    is_revoked: Callable[[str], bool] | None = None
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


# The algorithms a service may be configured with; `none` is never one of them.
ALGORITHMS = frozenset({"HS256", "HS384", "HS512", "RS256", "RS384", "RS512", "ES256", "ES384", "ES512"})


def verify(config: JWTConfig, token: str) -> dict[str, Any]:
    """Returns the claims of a valid, unrevoked token, else raises NotAuthenticated.

    The algorithm is pinned to the configured one: a token whose header names another (`none`, or
    HS256 signed with an RS256 service's public key as the HMAC secret: key confusion) is refused
    before any key is chosen."""
    if config.algorithm not in ALGORITHMS:
        raise errors.NotConfigured(f"JWT algorithm {config.algorithm!r} is not supported.")
    try:
        if jwt.get_unverified_header(token).get("alg") != config.algorithm:
            raise errors.NotAuthenticated("Token algorithm is not accepted.")
    except jwt.PyJWTError:
        raise errors.NotAuthenticated("Token is invalid or expired.") from None
    try:
        # simplejwt annotates `decode` with its Token class, but decodes the encoded string it is given.
        claims = config.backend().decode(token, verify=True)  # type: ignore[arg-type]
    except TokenBackendError:
        raise errors.NotAuthenticated("Token is invalid or expired.") from None
    jti = claims.get("jti")
    # The signature library checks exp and iat only when present: a signed token without an expiry
    # would be valid forever, so every claim an issued token carries is required.
    if not jti or not claims.get("sub") or "exp" not in claims or "iat" not in claims:
        raise errors.NotAuthenticated("Token is missing required claims.")
    if config.token_type is not None and claims.get("token_type") != config.token_type:
        raise errors.NotAuthenticated("Token is not an access token.")
    if config.is_revoked is not None and config.is_revoked(jti):
        raise errors.NotAuthenticated("Token has been revoked.")
    return claims


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()
