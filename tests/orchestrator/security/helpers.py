"""Credentials for tests, made through the real services (keys) and the configured JWT key."""

from __future__ import annotations

from datetime import timedelta

from orchestrator.security.principals import jwt_config
from orchestrator.security.services import api_key_create
from shared.auth import tokens


def api_key_headers(role: str, name: str | None = None) -> dict[str, str]:
    _, plaintext = api_key_create(name=name or f"test-{role}", role=role)
    return {"HTTP_X_API_KEY": plaintext}


def jwt_for(role: str | None, *, subject: str = "alice", **overrides) -> str:
    config = jwt_config()
    if overrides:
        config = tokens.JWTConfig(**{**config.__dict__, **overrides})
    claims = {"role": role} if role else {}
    return tokens.issue(config, subject=subject, claims=claims).token


def bearer(role: str | None, **overrides) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {jwt_for(role, **overrides)}"}


EXPIRED = {"lifetime": timedelta(seconds=-10)}
