"""Backup tests: the vault in a temporary folder per test, cases made through the real services."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.storage import storages

from tests.casemgmt.cases.conftest import case_type, make_case  # noqa: F401 - fixtures reused here


@pytest.fixture
def vault_root(settings, tmp_path) -> Path:
    root = tmp_path / "vault"
    settings.STORAGES = {
        **settings.STORAGES,
        "vault": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(root)},
        },
    }
    yield root
    storages._storages.pop("vault", None)
