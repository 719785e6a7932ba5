"""Upload, list, download and delete through the HTTP API on filesystem storage: exact bytes,
one stored copy per content, the size cap, types read from the bytes, sanitised names, audit."""

from __future__ import annotations

import hashlib
import struct
from urllib.parse import urlsplit

import pytest

from casemgmt.audit.models import AuditEvent
from casemgmt.audit.selectors import case_events
from casemgmt.vault.models import Blob, Document
from tests.casemgmt.vault.conftest import stored_blobs

CONTENT = "Grüße from the claimant\n".encode() + bytes(range(256)) * 40
# The first bytes of a 64-bit x86 ELF executable, however the client names or types it.
ELF = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 8 + struct.pack("<HHI", 2, 62, 1) + b"\x00" * 200


def follow(client, response_or_url):
    """Opens a link to our own signed route (path + query) with the given test client."""
    url = response_or_url if isinstance(response_or_url, str) else response_or_url["Location"]
    location = urlsplit(url)
    return client.get(f"{location.path}?{location.query}")


def body_of(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_case_upload_list_download_round_trip_keeps_exact_bytes(api, upload, owner, case):
    created = upload(owner, CONTENT, case=case, name="claim form.pdf", description="signed form")
    assert created.status_code == 201, created.json()
    doc = created.json()
    assert doc["contentHash"] == "sha256:" + hashlib.sha256(CONTENT).hexdigest()
    assert doc["size"] == len(CONTENT)
    assert doc["filename"] == "claim form.pdf"
    assert doc["caseId"] == str(case.id)
    assert doc["uploadedBy"] == str(owner.id)
    assert doc["description"] == "signed form"
    assert doc["signedUrl"].startswith("http://testserver/vault/signed/")

    listed = api(owner).get(f"/cases/{case.id}/documents")
    assert listed.status_code == 200
    assert [d["id"] for d in listed.json()] == [doc["id"]]
    assert "contentHash" not in listed.json()[0] and "signedUrl" not in listed.json()[0]

    redirect = api(owner).get(f"/cases/{case.id}/documents/{doc['id']}")
    assert redirect.status_code == 307
    served = follow(api(None), redirect)
    assert served.status_code == 200
    assert body_of(served) == CONTENT
    assert served["X-Content-Type-Options"] == "nosniff"
    assert "attachment" in served["Content-Disposition"] and "claim form.pdf" in served["Content-Disposition"]

    # The link in the upload response works too, without credentials.
    assert body_of(follow(api(None), doc["signedUrl"])) == CONTENT


def test_vault_upload_is_case_agnostic_and_downloads_directly(api, upload, owner):
    created = upload(owner, CONTENT, name="scan.bin")
    assert created.status_code == 201
    assert created.json()["caseId"] is None
    served = api(owner).get(f"/vault/download/{created.json()['id']}")
    assert served.status_code == 200
    assert body_of(served) == CONTENT
    assert served["Content-Length"] == str(len(CONTENT))


def test_list_is_newest_first(api, upload, owner, case):
    ids = [upload(owner, f"doc {i}".encode(), case=case).json()["id"] for i in range(3)]
    listed = api(owner).get(f"/cases/{case.id}/documents").json()
    assert [d["id"] for d in listed] == list(reversed(ids))


def test_same_bytes_are_stored_once(upload, owner, case, vault_root):
    first = upload(owner, CONTENT, case=case, name="a.txt").json()
    second = upload(owner, CONTENT, name="b.txt").json()
    assert first["id"] != second["id"]
    assert first["contentHash"] == second["contentHash"]
    assert Blob.objects.filter(sha256=hashlib.sha256(CONTENT).hexdigest()).count() == 1
    assert len(stored_blobs(vault_root)) == 1
    assert stored_blobs(vault_root)[0].read_bytes() == CONTENT


def test_upload_over_the_cap_is_413_and_stores_nothing(settings, upload, owner, case, vault_root):
    settings.VAULT_MAX_UPLOAD_BYTES = 1000
    response = upload(owner, b"x" * 1001, case=case)
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"
    assert response.json()["error"] is True
    assert not Document.objects.exists() and stored_blobs(vault_root) == []
    assert upload(owner, b"x" * 1000, case=case).status_code == 201  # exactly the cap is allowed


def test_a_large_body_is_refused_before_it_is_read(settings, upload, owner, case):
    settings.VAULT_MAX_UPLOAD_BYTES = 10
    response = upload(owner, b"y" * 200_000, case=case)
    assert response.status_code == 413


def test_disguised_executable_is_typed_by_its_bytes(upload, owner, case):
    response = upload(owner, ELF, case=case, name="invoice.pdf", content_type="application/pdf")
    assert response.status_code == 201
    assert response.json()["mimeType"] == "application/x-executable"
    text = upload(owner, b"plain words\n", case=case, name="x.exe", content_type="application/x-msdownload")
    assert text.json()["mimeType"] == "text/plain"


def test_filename_is_sanitised(upload, owner, case):
    assert upload(owner, b"a", case=case, name="../../etc/passwd").json()["filename"] == "passwd"
    assert upload(owner, b"b", case=case, name="C:\\Users\\x\\report.txt").json()["filename"] == "report.txt"
    assert upload(owner, b"c", case=case, name='a<b>|"c".txt').json()["filename"] == "a_b___c_.txt"
    assert upload(owner, b"d", case=case, name=" ... ").json()["filename"] == "document"
    long = upload(owner, b"e", case=case, name="n" * 300 + ".pdf").json()["filename"]
    assert len(long) == 255 and long.endswith(".pdf")


def test_upload_without_a_file_or_as_json_is_400_or_415(api, owner, case):
    missing = api(owner).post(f"/cases/{case.id}/documents", {"description": "x"}, format="multipart")
    assert missing.status_code == 400
    assert missing.json()["details"]["field"] == "file"
    as_json = api(owner).post(f"/cases/{case.id}/documents", {"file": "x"}, format="json")
    assert as_json.status_code == 415


def test_delete_removes_the_blob_only_when_nothing_else_refers_to_it(
    api, upload, owner, case, vault_root, django_capture_on_commit_callbacks
):
    first = upload(owner, CONTENT, case=case).json()
    second = upload(owner, CONTENT).json()
    with django_capture_on_commit_callbacks(execute=True):
        assert api(owner).delete(f"/cases/{case.id}/documents/{first['id']}").status_code == 204
    assert len(stored_blobs(vault_root)) == 1
    assert body_of(api(owner).get(f"/vault/download/{second['id']}")) == CONTENT
    with django_capture_on_commit_callbacks(execute=True):
        assert api(owner).delete(f"/vault/{second['id']}").status_code == 204
    assert stored_blobs(vault_root) == []
    assert not Blob.objects.exists()
    assert api(owner).get(f"/vault/download/{second['id']}").status_code == 404


@pytest.mark.django_db(transaction=True)  # the release runs when the delete really commits
def test_deleting_a_document_keeps_bytes_another_tenant_still_uses(api, upload, owner, outsider, vault_root):
    """Bytes are stored once across tenants. The release after a delete runs in the deleting
    request's tenant context, where row-level security hides the other tenant's document: the
    check whether anything still refers to the bytes must not be fooled by that."""
    mine = upload(owner, CONTENT).json()
    theirs = upload(outsider, CONTENT).json()
    assert mine["contentHash"] == theirs["contentHash"]
    assert api(owner).delete(f"/vault/{mine['id']}").status_code == 204
    assert body_of(api(outsider).get(f"/vault/download/{theirs['id']}")) == CONTENT
    assert Blob.objects.filter(sha256=hashlib.sha256(CONTENT).hexdigest()).exists()
    assert api(outsider).delete(f"/vault/{theirs['id']}").status_code == 204
    assert stored_blobs(vault_root) == [] and not Blob.objects.exists()


def test_case_route_refuses_a_document_of_another_case(api, upload, owner, make_case):
    one, two = make_case(), make_case()
    doc = upload(owner, b"abc", case=one).json()
    assert api(owner).get(f"/cases/{two.id}/documents/{doc['id']}").status_code == 404
    assert api(owner).delete(f"/cases/{two.id}/documents/{doc['id']}").status_code == 404


def test_every_action_is_audited(api, upload, owner, case, django_capture_on_commit_callbacks):
    doc = upload(owner, CONTENT, case=case).json()
    api(owner).post(f"/vault/signed-url/{doc['id']}")
    follow(api(None), api(owner).get(f"/cases/{case.id}/documents/{doc['id']}"))
    api(owner).get(f"/vault/download/{doc['id']}")
    with django_capture_on_commit_callbacks(execute=True):
        api(owner).delete(f"/vault/{doc['id']}")
    events = AuditEvent.objects.filter(resource=f"cases/{case.id}/documents/{doc['id']}").order_by("sequence")
    assert [e.action for e in events] == [
        "document:uploaded",
        "document:signed_url",  # the upload response's link
        "document:signed_url",  # POST /vault/signed-url
        "document:signed_url",  # the case route's redirect
        "document:downloaded",  # through that link
        "document:downloaded",  # GET /vault/download
        "document:deleted",
    ]
    assert all(e.actor == str(owner.id) for e in events)
    assert events[0].changes["contentHash"] == doc["contentHash"]
    assert [e.changes["via"] for e in events if e.action == "document:downloaded"] == ["signed_url", "api"]
    # Case documents belong to the case's own trail.
    trail = case_events(tenant_id=case.tenant_id, case_id=case.id).values_list("action", flat=True)
    assert "document:uploaded" in trail and "document:deleted" in trail


def test_a_form_field_given_twice_is_refused_not_read_as_its_last_part(upload, owner, case):
    # A list value in a multipart body becomes one part per item.
    for target in (None, case):
        refused = upload(owner, CONTENT, case=target, description=["first", "second"])
        assert refused.status_code == 400, refused.content
        assert refused.json()["details"]["field"] == "description"
    assert not Document.objects.exists()
