"""Every vault endpoint as the owner (allowed), as a member lacking the one permission it needs
(403), as a user of another tenant holding every permission (404), and anonymously (401)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.casemgmt.vault.conftest import ALL_VAULT


@dataclass
class Endpoint:
    method: str
    path: str
    permission: str
    success: int
    upload: bool = False


ENDPOINTS = [
    Endpoint("post", "/cases/{case}/documents", "vault:upload", 201, upload=True),
    Endpoint("get", "/cases/{case}/documents", "vault:read", 200),
    Endpoint("get", "/cases/{case}/documents/{doc}", "vault:read", 307),
    Endpoint("delete", "/cases/{case}/documents/{doc}", "vault:delete", 204),
    Endpoint("get", "/vault/download/{doc}", "vault:read", 200),
    Endpoint("delete", "/vault/{doc}", "vault:delete", 204),
    Endpoint("post", "/vault/signed-url/{doc}", "vault:read", 200),
    Endpoint("post", "/vault/upload", "vault:upload", 201, upload=True),
]


@pytest.fixture
def doc(upload, owner, case):
    return upload(owner, b"permission matrix", case=case).json()


def call(client, endpoint: Endpoint, case, doc):
    url = endpoint.path.format(case=case.id, doc=doc["id"])
    if endpoint.upload:
        body = {"file": SimpleUploadedFile("a.txt", b"new bytes", content_type="text/plain")}
        return client.post(url, body, format="multipart")
    return getattr(client, endpoint.method)(url)


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: f"{e.method} {e.path}")
def test_owner_succeeds(api, owner, case, doc, endpoint):
    assert call(api(owner), endpoint, case, doc).status_code == endpoint.success


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: f"{e.method} {e.path}")
def test_member_without_the_permission_is_403(api, tenant, make_user, case, doc, endpoint):
    # Everything else, including vault:download, which never stands in for vault:read.
    member = make_user(tenant, permissions=[p for p in ALL_VAULT if p != endpoint.permission])
    response = call(api(member), endpoint, case, doc)
    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"


@pytest.mark.parametrize(
    "endpoint", [e for e in ENDPOINTS if "{" in e.path], ids=lambda e: f"{e.method} {e.path}"
)
def test_other_tenant_is_404(api, outsider, case, doc, endpoint):
    response = call(api(outsider), endpoint, case, doc)
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


def test_other_tenant_document_through_own_vault_routes_is_404(api, outsider, upload, doc):
    """A user of another tenant cannot reach the document by id alone, on any route."""
    own = upload(outsider, b"theirs").json()
    assert own["id"] != doc["id"]
    assert api(outsider).get(f"/vault/download/{doc['id']}").status_code == 404


def test_vault_upload_by_another_tenant_lands_in_that_tenant(api, outsider, owner, upload):
    created = upload(outsider, b"globex file").json()
    assert api(owner).get(f"/vault/download/{created['id']}").status_code == 404
    assert api(outsider).get(f"/vault/download/{created['id']}").status_code == 200


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: f"{e.method} {e.path}")
def test_anonymous_is_401(api, case, doc, endpoint):
    response = call(api(None), endpoint, case, doc)
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


def test_seeded_roles_hold_the_vault_permissions_they_are_given(api, tenant, make_user, upload, owner, case):
    """Case Worker: vault:upload and vault:download; Viewer: vault:download; neither holds vault:read,
    so neither lists nor downloads through the authenticated routes (only through signed links)."""
    doc = upload(owner, b"seeded", case=case).json()
    worker = make_user(tenant, roles=["case_worker"])
    viewer = make_user(tenant, roles=["viewer"])
    assert upload(worker, b"by a case worker", case=case).status_code == 201
    assert upload(viewer, b"by a viewer", case=case).status_code == 403
    for user in (worker, viewer):
        assert api(user).get(f"/cases/{case.id}/documents").status_code == 403
        assert api(user).delete(f"/vault/{doc['id']}").status_code == 403
