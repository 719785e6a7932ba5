"""OIDC is wired only when configured by env; roles come from a claim. No real IdP is contacted."""

from __future__ import annotations

import json
import subprocess
import sys
from urllib.parse import parse_qs, urlsplit

import pytest

from orchestrator.security.oidc import RoleMappingOIDCBackend, role_from_claims
from tests.support.processes import ROOT, child_env

SCRIPT = """
import json, django
django.setup()
from django.conf import settings
from django.test import Client
response = Client().get("/oidc/authenticate/")
print(json.dumps({"status": response.status_code, "location": response.get("Location", ""),
                  "backends": list(settings.AUTHENTICATION_BACKENDS)}))
"""


def run_script(subprocess_env, extra):
    env = child_env({**subprocess_env, **extra})
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.django_db(transaction=True)
def test_oidc_login_is_wired_when_configured_and_absent_otherwise(subprocess_env):
    configured = run_script(
        subprocess_env,
        {
            "ORCH_OIDC_RP_CLIENT_ID": "orchestrator-client",
            "ORCH_OIDC_RP_CLIENT_SECRET": "client-secret",
            "ORCH_OIDC_OP_AUTHORIZATION_ENDPOINT": "https://idp.example.test/authorize",
            "ORCH_OIDC_OP_TOKEN_ENDPOINT": "https://idp.example.test/token",
            "ORCH_OIDC_OP_USER_ENDPOINT": "https://idp.example.test/userinfo",
            "ORCH_OIDC_OP_JWKS_ENDPOINT": "https://idp.example.test/jwks",
        },
    )
    assert configured["status"] == 302
    location = urlsplit(configured["location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == "https://idp.example.test/authorize"
    query = parse_qs(location.query)
    assert query["client_id"] == ["orchestrator-client"] and query["response_type"] == ["code"]
    assert "openid" in query["scope"][0] and query["state"][0]
    assert configured["backends"][0] == "orchestrator.security.oidc.RoleMappingOIDCBackend"

    plain = run_script(subprocess_env, {"ORCH_OIDC_RP_CLIENT_ID": ""})
    assert plain["status"] == 404
    assert "orchestrator.security.oidc.RoleMappingOIDCBackend" not in plain["backends"]


@pytest.fixture
def oidc_settings(settings):
    settings.OIDC_ROLE_CLAIM = "groups"
    settings.OIDC_DEFAULT_ROLE = "viewer"
    settings.OIDC_RP_CLIENT_ID = "c"
    settings.OIDC_RP_CLIENT_SECRET = "s"
    settings.OIDC_OP_TOKEN_ENDPOINT = "https://idp.example.test/token"
    settings.OIDC_OP_USER_ENDPOINT = "https://idp.example.test/userinfo"
    settings.OIDC_OP_JWKS_ENDPOINT = "https://idp.example.test/jwks"
    settings.OIDC_RP_SIGN_ALGO = "RS256"
    return settings


@pytest.mark.parametrize(
    ("claim", "role"),
    [
        ("admin", "admin"),
        (["staff", "operator"], "operator"),
        (["viewer", "admin"], "admin"),
        (None, "viewer"),
        ("root", "viewer"),
    ],
)
def test_role_from_claims(oidc_settings, claim, role):
    assert role_from_claims({"groups": claim}) == role


@pytest.mark.django_db
def test_backend_maps_the_role_onto_the_user(oidc_settings, api):
    backend = RoleMappingOIDCBackend()
    user = backend.create_user({"email": "op@example.test", "groups": ["operator"]})
    assert user.is_staff and not user.is_superuser
    user = backend.update_user(user, {"email": "op@example.test", "groups": ["admin"]})
    assert user.is_superuser
    oidc_settings.ORCH_SECURITY_ENABLED = True
    api.force_login(user)  # what the OIDC callback does after a successful login
    created = api.post(
        "/api/webhooks",
        {"name": "n", "url": "http://127.0.0.1:9/", "events": ["dag.failed"], "secret": "s"},
        format="json",
    )
    assert created.status_code == 201
    user = backend.update_user(user, {"email": "op@example.test", "groups": []})
    assert not user.is_staff and not user.is_superuser
