"""The blob member is generic over the vault's storage: with the vault in an S3-compatible bucket (a
real local S3 server), the backup reads each blob from the bucket and restore writes it under the
same key."""

from __future__ import annotations

import io

import pytest
from django.core.files.storage import storages
from django.core.management import call_command

from casemgmt.vault.services import document_upload
from casemgmt.vault.uploads import HashedUpload
from tests.casemgmt.vault.test_s3_storage import BUCKET, bucket, s3_endpoint  # noqa: F401 - fixtures
from tests.support.backups import files_under

pytestmark = pytest.mark.django_db(transaction=True)


def test_blobs_in_a_bucket_round_trip(bucket, admin_user, make_case, tmp_path):  # noqa: F811
    storages._storages.pop("vault", None)
    case = make_case()
    for body in (b"first object", b"second object"):
        document_upload(user=admin_user, upload=HashedUpload.from_bytes(body, name="a.txt"), case=case)
    archive, target = tmp_path / "s3.tar.gz", tmp_path / "restored"
    out = io.StringIO()
    call_command("backup", "--output", str(archive), "--verify", "--no-progress", stdout=out)
    assert "2 of 2 blob(s) held" in out.getvalue()
    call_command("restore", "--input", str(archive), "--target", str(target), "--no-progress", stdout=out)
    in_bucket = {
        item["Key"]: bucket.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read()
        for item in bucket.list_objects_v2(Bucket=BUCKET)["Contents"]
    }
    restored = {name: body for name, body in files_under(target).items() if name.startswith("blobs/")}
    assert restored == in_bucket and len(restored) == 2
