"""The vault on an S3-compatible store: a real S3 server (moto in server mode) on a local port,
reached by django-storages and boto3 exactly as a production bucket would be."""

from __future__ import annotations

import hashlib

import boto3
import httpx
import pytest
from moto.server import ThreadedMotoServer

from tests.support.processes import free_port

BUCKET = "vault-test"
CONTENT = b"%PDF-1.4\n% a small pdf-looking file\n" + bytes(range(256)) * 8
CREDENTIALS = {"aws_access_key_id": "test-key", "aws_secret_access_key": "test-secret"}


@pytest.fixture(scope="module")
def s3_endpoint():
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


@pytest.fixture
def bucket(s3_endpoint, settings):
    client = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1", **CREDENTIALS)
    client.create_bucket(Bucket=BUCKET)
    settings.STORAGES = {
        **settings.STORAGES,
        "vault": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": BUCKET,
                "endpoint_url": s3_endpoint,
                "region_name": "us-east-1",
                "access_key": CREDENTIALS["aws_access_key_id"],
                "secret_key": CREDENTIALS["aws_secret_access_key"],
                "addressing_style": "path",
                "signature_version": "s3v4",
                "default_acl": None,
                "file_overwrite": True,
                "querystring_auth": True,
                "querystring_expire": 900,
            },
        },
    }
    yield client
    for item in client.list_objects_v2(Bucket=BUCKET).get("Contents", []):
        client.delete_object(Bucket=BUCKET, Key=item["Key"])
    client.delete_bucket(Bucket=BUCKET)


def keys(client) -> list[str]:
    return [item["Key"] for item in client.list_objects_v2(Bucket=BUCKET).get("Contents", [])]


def test_upload_stores_one_object_per_content_and_links_redirect_to_presigned_urls(
    api, upload, owner, case, bucket, django_capture_on_commit_callbacks
):
    sha = hashlib.sha256(CONTENT).hexdigest()
    first = upload(owner, CONTENT, case=case, name="report.pdf").json()
    second = upload(owner, CONTENT, name="copy.pdf").json()
    assert first["contentHash"] == second["contentHash"] == f"sha256:{sha}"
    assert first["mimeType"] == "application/pdf"
    assert keys(bucket) == [f"blobs/{sha[:2]}/{sha[2:4]}/{sha}"]

    token_url = httpx.URL(first["signedUrl"])
    signed = api(None).get(token_url.path, {"token": token_url.params["token"]})
    assert signed.status_code == 302
    presigned = signed["Location"]
    assert presigned.startswith(f"{bucket.meta.endpoint_url}/{BUCKET}/") and "X-Amz-Signature" in presigned
    assert "X-Amz-Expires=900" in presigned  # the store's link lives no longer than our own
    fetched = httpx.get(presigned)
    assert fetched.status_code == 200
    assert fetched.content == CONTENT
    assert fetched.headers["content-type"] == "application/pdf"
    assert "report.pdf" in fetched.headers["content-disposition"]

    direct = api(owner).get(f"/vault/download/{second['id']}")
    assert direct.status_code == 307
    assert httpx.get(direct["Location"]).content == CONTENT

    with django_capture_on_commit_callbacks(execute=True):
        assert api(owner).delete(f"/vault/{first['id']}").status_code == 204
    assert len(keys(bucket)) == 1  # still referenced by the second document
    with django_capture_on_commit_callbacks(execute=True):
        assert api(owner).delete(f"/vault/{second['id']}").status_code == 204
    assert keys(bucket) == []
