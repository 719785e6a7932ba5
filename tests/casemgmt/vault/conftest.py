"""Vault fixtures: filesystem storage in a temporary folder, cases made through the real services,
and helpers that upload through the HTTP API."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.storage import storages
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.casemgmt.cases.conftest import case_type, make_case  # noqa: F401 - fixtures reused here

ALL_VAULT = ["cases:read", "vault:read", "vault:upload", "vault:delete", "vault:download"]


@pytest.fixture(autouse=True)
def vault_root(settings, tmp_path) -> Path:
    """Each test stores its blobs in its own folder."""
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


def stored_blobs(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


@pytest.fixture
def owner(tenant, make_user):
    return make_user(tenant, permissions=ALL_VAULT)


@pytest.fixture
def outsider(other_tenant, make_user):
    """Holds every vault permission, but in another tenant."""
    return make_user(other_tenant, permissions=ALL_VAULT)


@pytest.fixture
def case(make_case):  # noqa: F811 - the fixture imported above, requested by name
    return make_case()


def file_of(content: bytes, name: str = "notes.txt", content_type: str = "text/plain") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type=content_type)


@pytest.fixture
def upload(api) -> Callable[..., Any]:
    """`upload(user, content, case=None, name=...)` posts a multipart upload and returns the response."""

    def post(user: Any, content: bytes, *, case: Any = None, name: str = "notes.txt", **extra: Any) -> Any:
        url = f"/cases/{case.id}/documents" if case is not None else "/vault/upload"
        body = {"file": file_of(content, name, extra.pop("content_type", "text/plain")), **extra}
        return api(user).post(url, body, format="multipart")

    return post
