"""The case service's JWT configuration and token helpers on top of `shared.auth.tokens`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings

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
    )


def issue_for(user: User) -> tokens.IssuedToken:
    claims = {"tenant": str(user.tenant_id), "gen": user.token_generation}
    return tokens.issue(jwt_config(), subject=str(user.id), claims=claims)
