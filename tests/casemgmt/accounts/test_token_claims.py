"""A correctly signed JWT is accepted only with the claims every issued token carries: exp, iat,
jti, sub and token_type "access"."""

from __future__ import annotations

import time
import uuid

import jwt
import pytest
from django.conf import settings


def signed(user, **changes):
    now = int(time.time())
    claims = {
        "sub": str(user.id),
        "jti": uuid.uuid4().hex,
        "iat": now,
        "exp": now + 600,
        "token_type": "access",
        "tenant": str(user.tenant_id),
        "gen": user.token_generation,
        "iss": settings.JWT["ISSUER"],
        "aud": settings.JWT["AUDIENCE"],
    }
    claims.update(changes)
    return jwt.encode(
        {k: v for k, v in claims.items() if v is not None}, settings.JWT["SIGNING_KEY"], "HS256"
    )


def call(api, token):
    return api(None).get("/auth/preferences", HTTP_AUTHORIZATION=f"Bearer {token}")


def test_a_complete_token_is_accepted(api, admin_user):
    assert call(api, signed(admin_user)).status_code == 200


@pytest.mark.parametrize(
    "changes",
    [{"exp": None}, {"iat": None}, {"token_type": None}, {"token_type": "refresh"}, {"jti": None}],
    ids=["no-exp", "no-iat", "no-type", "refresh-type", "no-jti"],
)
def test_a_signed_token_missing_a_required_claim_is_401(api, admin_user, changes):
    response = call(api, signed(admin_user, **changes))
    assert response.status_code == 401, response.content
    assert response.json()["code"] == "not_authenticated"
