"""Signed download links: valid ones serve the bytes without credentials; tampered, expired,
other-document and other-tenant tokens are 403."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core import signing

from casemgmt.vault.tokens import SALT, token_issue
from shared.api.time import parse_iso


class OldSigner(signing.TimestampSigner):
    """Django's own signer with its clock an hour back: a genuine token, issued long ago."""

    def timestamp(self) -> str:
        return signing.b62_encode(int(time.time()) - 3600)


@pytest.fixture
def doc(upload, owner, case):
    return upload(owner, b"signed content", case=case).json()


def token_of(url: str) -> str:
    return parse_qs(urlsplit(url).query)["token"][0]


def get_signed(client, doc_id: str, token: str):
    return client.get(f"/vault/signed/{doc_id}", {"token": token})


def test_signed_url_endpoint_answers_url_and_expiry(api, owner, doc):
    response = api(owner).post(f"/vault/signed-url/{doc['id']}")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"url", "expiresAt"}
    expires = parse_iso(body["expiresAt"], "expiresAt")
    assert isinstance(expires, datetime)
    assert timedelta(minutes=14) < expires - datetime.now(expires.tzinfo) <= timedelta(minutes=15)
    served = get_signed(api(None), doc["id"], token_of(body["url"]))
    assert served.status_code == 200
    assert b"".join(served.streaming_content) == b"signed content"


def test_tampered_token_is_403(api, doc):
    token = token_of(doc["signedUrl"])
    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    for bad in (flipped, token + "x", "garbage", ""):
        response = get_signed(api(None), doc["id"], bad)
        assert response.status_code == 403, bad
        assert response.json()["code"] == "permission_denied"


def test_expired_token_is_403(api, doc, owner):
    value = {"d": doc["id"], "t": str(owner.tenant_id), "u": str(owner.id)}
    old = OldSigner(salt=SALT).sign_object(value, compress=False)
    response = get_signed(api(None), doc["id"], old)
    assert response.status_code == 403
    assert "expired" in response.json()["message"]


def test_token_of_another_document_is_403(api, upload, owner, case, doc):
    other = upload(owner, b"other content", case=case).json()
    assert get_signed(api(None), doc["id"], token_of(other["signedUrl"])).status_code == 403


def test_token_bound_to_another_tenant_is_403(api, doc, other_tenant, owner):
    forged = token_issue(document_id=doc["id"], tenant_id=other_tenant.id, issued_by=owner.id)
    assert get_signed(api(None), doc["id"], forged.token).status_code == 403


def test_token_signed_with_another_secret_is_403(api, doc, owner, settings):
    value = {"d": doc["id"], "t": str(owner.tenant_id), "u": str(owner.id)}
    foreign = signing.TimestampSigner(key="some-other-secret", salt=SALT).sign_object(value)
    assert get_signed(api(None), doc["id"], foreign).status_code == 403


def test_link_of_a_deleted_document_is_404(api, owner, doc):
    assert api(owner).delete(f"/vault/{doc['id']}").status_code == 204
    assert get_signed(api(None), doc["id"], token_of(doc["signedUrl"])).status_code == 404


def test_bearer_header_is_not_needed_nor_checked(api, doc, client):
    # A stale or foreign Authorization header does not turn the public route into a 401.
    response = client.get(
        f"/vault/signed/{doc['id']}",
        {"token": token_of(doc["signedUrl"])},
        HTTP_AUTHORIZATION="Bearer nonsense",
    )
    assert response.status_code == 200


# --- a link dies with its issuer's access --------------------------------------------------------


def test_link_of_a_disabled_issuer_is_403(api, doc, owner, admin_user):
    from casemgmt.accounts.services import principal_disable

    token = token_of(doc["signedUrl"])
    assert get_signed(api(None), doc["id"], token).status_code == 200
    principal_disable(user=owner, actor=admin_user)
    refused = get_signed(api(None), doc["id"], token)
    assert refused.status_code == 403
    assert refused.json()["code"] == "permission_denied"


def test_link_of_a_disabled_agent_is_403(api, doc, tenant, admin_user):
    """An agent's API key is revoked by disabling the agent; its links go with it."""
    from rest_framework.test import APIClient

    from casemgmt.accounts.services import principal_create, principal_disable

    created = principal_create(
        tenant=tenant,
        actor=admin_user,
        email="bot@example.test",
        display_name="Bot",
        role_names=["admin"],
        kind="agent",
    )
    agent_client = APIClient()
    agent_client.credentials(HTTP_AUTHORIZATION=f"Bearer {created.api_key}")
    url = agent_client.post(f"/vault/signed-url/{doc['id']}").json()["url"]
    assert get_signed(api(None), doc["id"], token_of(url)).status_code == 200
    principal_disable(user=created.user, actor=admin_user)
    assert get_signed(api(None), doc["id"], token_of(url)).status_code == 403


def test_link_of_an_issuer_who_lost_vault_read_is_403(api, doc, owner):
    token = token_of(doc["signedUrl"])
    for role in owner.roles.all():
        role.permissions = [p for p in role.permissions if p != "vault:read"]
        role.save(update_fields=["permissions"])
    assert get_signed(api(None), doc["id"], token).status_code == 403


def test_link_of_a_deleted_or_foreign_issuer_is_403(api, doc, owner, outsider):
    moved = token_issue(document_id=doc["id"], tenant_id=owner.tenant_id, issued_by=outsider.id)
    assert get_signed(api(None), doc["id"], moved.token).status_code == 403
    unknown = token_issue(document_id=doc["id"], tenant_id=owner.tenant_id, issued_by="not-a-uuid")
    assert get_signed(api(None), doc["id"], unknown.token).status_code == 403
