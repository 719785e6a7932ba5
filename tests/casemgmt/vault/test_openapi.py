"""The OpenAPI document describes exactly the fields the vault endpoints answer with."""

from __future__ import annotations


def test_documented_fields_match_real_responses(api, upload, owner, case):
    components = api(None).get("/openapi.json").json()["components"]["schemas"]

    def documented(name: str) -> set[str]:
        return set(components[name]["properties"])

    created = upload(owner, b"documented", case=case).json()
    assert set(created) == documented("DocumentUploadOut")
    listed = api(owner).get(f"/cases/{case.id}/documents").json()
    assert set(listed[0]) == documented("DocumentOut")
    signed = api(owner).post(f"/vault/signed-url/{created['id']}").json()
    assert set(signed) == documented("SignedUrlOut")
    paths = api(None).get("/openapi.json").json()["paths"]
    upload_body = paths["/cases/{case_id}/documents"]["post"]["requestBody"]["content"]
    assert "multipart/form-data" in upload_body
    assert {"/vault/upload", "/vault/signed/{document_id}", "/vault/{document_id}"} <= set(paths)
