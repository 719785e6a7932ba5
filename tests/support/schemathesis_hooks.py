"""Credentials for schemathesis runs against our services (loaded by `st` through SCHEMATHESIS_HOOKS).

Every operation gets the run's token (FUZZ_TOKEN), except logout: it revokes the token it is called
with, so each call gets a fresh login (FUZZ_BASE_URL, FUZZ_LOGIN_EMAIL, FUZZ_LOGIN_PASSWORD) and the
rest of the run keeps a working token.
"""

from __future__ import annotations

import os
from typing import Any

import httpx
import schemathesis

LOGOUT = "/auth/logout"


def _bearer(case: Any, token: str) -> None:
    case.headers = {**(case.headers or {}), "Authorization": f"Bearer {token}"}


@schemathesis.auth(refresh_interval=None, retry_on=[]).skip_for(path=LOGOUT)
class RunToken:
    def get(self, case: Any, context: Any) -> str:
        return os.environ["FUZZ_TOKEN"]

    def set(self, case: Any, data: str, context: Any) -> None:
        _bearer(case, data)


@schemathesis.auth(refresh_interval=None, retry_on=[]).apply_to(path=LOGOUT)
class FreshLogin:
    def get(self, case: Any, context: Any) -> str:
        response = httpx.post(
            os.environ["FUZZ_BASE_URL"] + "/auth/login",
            json={"email": os.environ["FUZZ_LOGIN_EMAIL"], "password": os.environ["FUZZ_LOGIN_PASSWORD"]},
            timeout=30,
        )
        response.raise_for_status()
        return response.json()["token"]

    def set(self, case: Any, data: str, context: Any) -> None:
        _bearer(case, data)
