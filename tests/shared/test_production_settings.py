"""Production settings refuse to start without their secrets (checked in a fresh interpreter)."""

import subprocess
import sys

import pytest
from cryptography.fernet import Fernet

from shared.audit.signing import new_key_entry

SERVICES = {"CASE": "casemgmt.config.settings.production", "ORCH": "orchestrator.config.settings.production"}


def boot(module: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    code = "import django; django.setup(); from django.conf import settings; print(settings.DATABASES['default']['ENGINE'])"
    return subprocess.run(
        [sys.executable, "-c", code],
        env={"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": module, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def complete_env(prefix: str) -> dict[str, str]:
    env = {
        f"{prefix}_SECRET_KEY": "s3cret",
        f"{prefix}_REDIS_URL": "redis://127.0.0.1:6379",
        f"{prefix}_DATABASE_URL": "postgres://postgres@127.0.0.1:5432/unused",
        f"{prefix}_ALLOWED_HOSTS": "service.example.com",
    }
    # Both services encrypt at rest: the orchestrator its webhook secrets, the case service its
    # connector credentials and inbound webhook secrets.
    env[f"{prefix}_FIELD_ENCRYPTION_KEYS"] = Fernet.generate_key().decode()
    # Audit checkpoints are signed with keys the database never holds.
    env[f"{prefix}_AUDIT_SIGNING_KEYS"] = new_key_entry("k1")
    return env


REQUIRED = [
    (prefix, name) for prefix in sorted(SERVICES) for name in ("SECRET_KEY", "REDIS_URL", "DATABASE_URL")
]


@pytest.mark.parametrize("prefix", sorted(SERVICES))
def test_complete_environment_boots_on_postgresql(prefix):
    result = boot(SERVICES[prefix], complete_env(prefix))
    assert result.returncode == 0, result.stderr
    assert "postgresql" in result.stdout


@pytest.mark.parametrize(
    ("prefix", "missing"),
    [
        *REQUIRED,
        *(
            (prefix, name)
            for prefix in sorted(SERVICES)
            for name in ("FIELD_ENCRYPTION_KEYS", "AUDIT_SIGNING_KEYS")
        ),
    ],
)
def test_missing_setting_stops_the_process(prefix, missing):
    env = complete_env(prefix)
    del env[f"{prefix}_{missing}"]
    result = boot(SERVICES[prefix], env)
    assert result.returncode != 0
    assert f"{prefix}_{missing} must" in result.stderr


@pytest.mark.parametrize("prefix", sorted(SERVICES))
@pytest.mark.parametrize("hosts", [None, "*", "service.example.com,*"])
def test_wildcard_or_missing_allowed_hosts_stops_the_process(prefix, hosts):
    env = complete_env(prefix)
    del env[f"{prefix}_ALLOWED_HOSTS"]
    if hosts is not None:
        env[f"{prefix}_ALLOWED_HOSTS"] = hosts
    result = boot(SERVICES[prefix], env)
    assert result.returncode != 0
    assert f"{prefix}_ALLOWED_HOSTS must list" in result.stderr


@pytest.mark.parametrize("prefix", sorted(SERVICES))
def test_a_malformed_audit_signing_key_stops_the_process_without_showing_it(prefix):
    env = complete_env(prefix)
    env[f"{prefix}_AUDIT_SIGNING_KEYS"] = "k1:bm90LTMyLWJ5dGVz"  # base64 of 12 bytes
    result = boot(SERVICES[prefix], env)
    assert result.returncode != 0
    assert "audit signing key 'k1' is not the base64 of 32 bytes" in result.stderr
    assert "bm90LTMyLWJ5dGVz" not in result.stderr
