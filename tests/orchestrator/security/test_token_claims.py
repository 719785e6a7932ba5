"""A correctly signed JWT is accepted only with exp, iat, jti, sub and token_type "access"."""

from __future__ import annotations

import time
import uuid

import jwt
import pytest
from django.conf import settings

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def security_on(settings):
    settings.ORCH_SECURITY_ENABLED = True


def signed(**changes):
    now = int(time.time())
    claims = {
        "sub": "alice",
        "jti": uuid.uuid4().hex,
        "iat": now,
        "exp": now + 600,
        "token_type": "access",
        "role": "admin",
        "iss": settings.JWT["ISSUER"],
        "aud": settings.JWT["AUDIENCE"],
    }
    claims.update(changes)
    body = {k: v for k, v in claims.items() if v is not None}
    return jwt.encode(body, settings.JWT["SIGNING_KEY"], settings.JWT["ALGORITHM"])


def test_a_complete_token_is_accepted(api):
    assert api.get("/api/status", HTTP_AUTHORIZATION=f"Bearer {signed()}").status_code == 200


@pytest.mark.parametrize(
    "changes",
    [{"exp": None}, {"iat": None}, {"token_type": None}, {"token_type": "refresh"}],
    ids=["no-exp", "no-iat", "no-type", "refresh-type"],
)
def test_a_signed_token_missing_a_required_claim_is_401(api, changes):
    response = api.get("/api/status", HTTP_AUTHORIZATION=f"Bearer {signed(**changes)}")
    assert response.status_code == 401, response.content
    assert response.json()["code"] == "not_authenticated"
