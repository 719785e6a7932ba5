"""A clean install works: `pip install .` without extras, in a fresh virtualenv, is enough to import
every module of both services and `shared` and to load every Celery task.

The production image installs exactly that way, so a runtime import of a package declared only as a
dev extra (or not at all) fails here instead of in a worker at start. The install copies the same
files the Dockerfile copies into a temporary folder, so it never writes build output into the
repository and cannot see anything the image would not have.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).with_name("packaging_probe.py")
SERVICES = {
    "casemgmt": "casemgmt.config.settings.local",
    "orchestrator": "orchestrator.config.settings.local",
}
# Placeholders that satisfy the production settings' start-up checks; nothing connects to them.
PRODUCTION_ENV = {
    "casemgmt": {
        "CASE_SECRET_KEY": "placeholder",
        "CASE_ALLOWED_HOSTS": "cases.example.com",
        "CASE_DATABASE_URL": "postgres://case@127.0.0.1:1/case",
        "CASE_REDIS_URL": "redis://127.0.0.1:1",
        "CASE_FIELD_ENCRYPTION_KEYS": "bG9jYWwtZGV2ZWxvcG1lbnQtb25seS1rZXktMzJieXQ=",
        "CASE_AUDIT_SIGNING_KEYS": "k1:cGxhY2Vob2xkZXItYXVkaXQtc2lnbmluZy1zZWVkLTE=",
    },
    "orchestrator": {
        "ORCH_SECRET_KEY": "placeholder",
        "ORCH_ALLOWED_HOSTS": "orch.example.com",
        "ORCH_DATABASE_URL": "postgres://orch@127.0.0.1:1/orch",
        "ORCH_REDIS_URL": "redis://127.0.0.1:1",
        "ORCH_FIELD_ENCRYPTION_KEYS": "bG9jYWwtZGV2ZWxvcG1lbnQtb25seS1rZXktMzJieXQ=",
        "ORCH_AUDIT_SIGNING_KEYS": "k1:cGxhY2Vob2xkZXItYXVkaXQtc2lnbmluZy1zZWVkLTE=",
        "ORCH_DB_POOL_MAX_SIZE": "8",  # as deploy/ runs the web process
    },
}
COPIED = ["pyproject.toml", "README.md", "shared", "casemgmt", "orchestrator"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Python interpreter of a fresh virtualenv with the project installed without extras."""
    base = tmp_path_factory.mktemp("clean-install")
    source = base / "source"
    source.mkdir()
    for name in COPIED:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, source / name)
    venv.create(base / "venv", with_pip=True)
    python = base / "venv" / "bin" / "python"
    install = subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(source)],
        cwd=base,
        env=_clean_env(base),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    return python


def _clean_env(base: Path) -> dict[str, str]:
    """The environment without anything that would point Python or the settings at the repository
    or at the test databases: the probe must see only the installed package and its defaults."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "CASE_", "ORCH_", "DJANGO_", "PYTEST_", "TEST_", "VIRTUAL_ENV"))
    }
    env["CASE_VAR_DIR"] = str(base / "var" / "case")
    env["ORCH_VAR_DIR"] = str(base / "var" / "orch")
    return env


def _probe(python: Path, service: str, *, production: bool = False) -> dict:
    base = python.parents[2]
    settings_module = f"{service}.config.settings.production" if production else SERVICES[service]
    env = _clean_env(base)
    if production:
        env.update(PRODUCTION_ENV[service])
    completed = subprocess.run(
        [python, "-I", str(PROBE), service, settings_module, *(["--production"] if production else [])],
        cwd=base,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])


def _declared_task_count(package: str) -> int:
    """Celery tasks written in the source tree (every task in the project is a `@shared_task`)."""
    return sum(
        len(re.findall(r"^@shared_task\b", path.read_text(), flags=re.MULTILINE))
        for path in (ROOT / package).rglob("*.py")
    )


@pytest.mark.parametrize("service", sorted(SERVICES))
def test_clean_install_imports_every_module_and_task(installed: Path, service: str) -> None:
    result = _probe(installed, service)

    venv_dir = str(installed.parents[1])
    for package, location in result["locations"].items():
        assert location.startswith(venv_dir), f"{package} imported from {location}, not the install"
    assert result["errors"] == {}, "\n".join(result["errors"].values())
    # Autodiscovery (what a worker runs at start) finds every task any module defines.
    assert result["autodiscovered"], "autodiscovery registered no project task"
    assert set(result["all_tasks"]) <= set(result["autodiscovered"])
    assert len(result["autodiscovered"]) == _declared_task_count(service) + _declared_task_count("shared")
    assert set(result["beat"]) <= set(result["autodiscovered"])


@pytest.mark.parametrize("service", sorted(SERVICES))
def test_clean_install_loads_production_settings_and_backends(installed: Path, service: str) -> None:
    result = _probe(installed, service, production=True)

    assert result["errors"] == {}, "\n".join(result["errors"].values())
    assert result["autodiscovered"]
    assert "RedisCache" in result["backends"]
    assert "ConnectionPool" in result["backends"]
    if service == "casemgmt":
        assert "RedisChannelLayer" in result["backends"]
