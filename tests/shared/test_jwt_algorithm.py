"""JWT algorithm pinning: only the configured algorithm verifies; `none`, a switched algorithm and
key confusion (HS256 signed with an RS256 service's public key) are refused."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import uuid

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from shared.api import errors
from shared.auth import tokens

HS = tokens.JWTConfig(signing_key="hs-secret-for-tests-only-0123456789", issuer="iss", audience="aud")


def claims() -> dict:
    now = int(time.time())
    return {"sub": "u1", "jti": uuid.uuid4().hex, "iat": now, "exp": now + 60, "token_type": "access",
            "iss": "iss", "aud": "aud"}  # fmt: skip


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hand_signed(header: dict, payload: dict, hmac_key: bytes | None) -> str:
    """A token built by hand, as an attacker would (the library refuses to build these)."""
    signing_input = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(payload).encode())}"
    signature = (
        b"" if hmac_key is None else hmac.new(hmac_key, signing_input.encode(), hashlib.sha256).digest()
    )
    return f"{signing_input}.{b64(signature)}"


@pytest.fixture(scope="module")
def rsa_keys() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


def test_a_token_of_the_configured_algorithm_verifies():
    assert tokens.verify(HS, tokens.issue(HS, subject="u1").token)["sub"] == "u1"


def test_alg_none_is_refused():
    token = hand_signed({"alg": "none", "typ": "JWT"}, claims(), None)
    with pytest.raises(errors.NotAuthenticated):
        tokens.verify(HS, token)


def test_a_switched_algorithm_with_the_right_secret_is_refused():
    token = jwt.encode(claims(), HS.signing_key, algorithm="HS512")
    with pytest.raises(errors.NotAuthenticated, match="algorithm"):
        tokens.verify(HS, token)


def test_rs256_verifies_with_the_public_key(rsa_keys):
    private, public = rsa_keys
    config = tokens.JWTConfig(
        signing_key=private, verifying_key=public, algorithm="RS256", issuer="iss", audience="aud"
    )
    assert tokens.verify(config, jwt.encode(claims(), private, algorithm="RS256"))["sub"] == "u1"


def test_key_confusion_hs256_signed_with_the_public_key_is_refused(rsa_keys):
    private, public = rsa_keys
    config = tokens.JWTConfig(
        signing_key=private, verifying_key=public, algorithm="RS256", issuer="iss", audience="aud"
    )
    forged = hand_signed({"alg": "HS256", "typ": "JWT"}, claims(), public.encode())
    with pytest.raises(errors.NotAuthenticated, match="algorithm"):
        tokens.verify(config, forged)


def test_an_unsupported_configured_algorithm_is_a_configuration_error():
    config = tokens.JWTConfig(signing_key="k", algorithm="none")
    with pytest.raises(errors.NotConfigured):
        tokens.verify(config, tokens.issue(HS, subject="u1").token)


def test_garbage_is_refused():
    with pytest.raises(errors.NotAuthenticated):
        tokens.verify(HS, "not-a-token")
