"""Uploads through the real ASGI server (daphne), as production serves them: a multipart upload
larger than one chunk round-trips with its bytes intact, and one over the cap is a 413."""

from __future__ import annotations

import httpx
import pytest
from django.conf import settings

from casemgmt.accounts.tokens import issue_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


def test_upload_and_download_over_asgi(asgi_server, tenant, make_user):
    user = make_user(tenant, permissions=["vault:upload", "vault:read"])
    headers = {"Authorization": f"Bearer {issue_for(user).token}"}
    content = bytes(range(256)) * 4096  # 1 MiB, more than one chunk on the way in
    created = httpx.post(
        f"{asgi_server}/vault/upload", files={"file": ("big.bin", content)}, headers=headers, timeout=30
    )
    assert created.status_code == 201, created.text
    served = httpx.get(f"{asgi_server}/vault/download/{created.json()['id']}", headers=headers, timeout=30)
    assert served.content == content


def test_upload_over_the_cap_over_asgi_is_413(asgi_server, tenant, make_user):
    user = make_user(tenant, permissions=["vault:upload"])
    headers = {"Authorization": f"Bearer {issue_for(user).token}"}
    too_big = b"z" * (settings.VAULT_MAX_UPLOAD_BYTES + 1)
    response = httpx.post(
        f"{asgi_server}/vault/upload", files={"file": ("big.bin", too_big)}, headers=headers, timeout=60
    )
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"
