"""The OpenAPI document describes exactly the fields the vault endpoints answer with."""

from __future__ import annotations

from casemgmt.vault.erasure import erasure_run


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


def test_documented_erasure_fields_match_real_responses(api, admin_user, tenant, make_user):
    components = api(None).get("/openapi.json").json()["components"]["schemas"]
    subject = make_user(tenant, permissions=["cases:read"])
    accepted = api(admin_user).post(
        "/admin/erasure", {"userId": str(subject.id), "reason": "r"}, format="json"
    )
    assert set(accepted.json()) == set(components["ErasureAcceptedOut"]["properties"])
    erasure_run(erasure_id=accepted.json()["id"])
    status = api(admin_user).get(f"/admin/erasure/{accepted.json()['id']}").json()
    assert set(status) == set(components["ErasureOut"]["properties"])
    assert set(status["report"]) == set(components["ErasureReportOut"]["properties"])
