"""Django admin: connector configuration, secrets write-only, saved through the service."""

from __future__ import annotations

import json

from casemgmt.audit.models import AuditEvent
from casemgmt.connectors.models import ConnectorConfig
from shared import crypto
from tests.casemgmt.conftest import admin_client

TOKEN = "xoxb-very-secret-token"


def stored(tenant) -> dict:
    return crypto.decrypt_json(ConnectorConfig.objects.get(tenant=tenant, key="slack").config_encrypted)


def test_secrets_are_encrypted_never_shown_and_kept_when_left_masked(admin_user, tenant):
    client = admin_client(admin_user)
    response = client.post(
        "/admin/connectors/connectorconfig/add/", {"key": "slack", "config": json.dumps({"token": TOKEN})}
    )
    assert response.status_code == 302, response.content
    row = ConnectorConfig.objects.get(tenant=tenant, key="slack")
    assert TOKEN not in row.config_encrypted and stored(tenant)["token"] == TOKEN

    page = client.get(f"/admin/connectors/connectorconfig/{row.pk}/change/")
    assert page.status_code == 200
    assert TOKEN.encode() not in page.content and b"***" in page.content
    assert row.config_encrypted.encode() not in page.content

    kept = {"token": "***", "apiUrl": "https://slack.example.test/api"}
    assert client.post(page.request["PATH_INFO"], {"config": json.dumps(kept)}).status_code == 302
    assert stored(tenant) == {"token": TOKEN, "apiUrl": "https://slack.example.test/api"}
    audited = AuditEvent.objects.filter(tenant=tenant, action="connector:configured").order_by("sequence")
    assert [e.changes["changedKeys"] for e in audited] == [["token"], ["apiUrl"]]
    assert all(TOKEN not in json.dumps(e.changes) for e in audited)


def test_an_invalid_configuration_is_refused_on_the_form_which_lists_the_keys(admin_user, tenant):
    client = admin_client(admin_user)
    add = client.get("/admin/connectors/connectorconfig/add/").content.decode()
    assert "<code>token</code>" in add and "not found" not in add  # every connector's keys, listed
    response = client.post(
        "/admin/connectors/connectorconfig/add/",
        {"key": "slack", "config": json.dumps({"token": TOKEN, "nope": 1})},
    )
    assert response.status_code == 200  # the form again, as typed, with the service's message
    page = response.content.decode()
    assert "nope: is not a configuration key of this connector" in page and "&quot;nope&quot;: 1" in page
    assert not ConnectorConfig.objects.filter(tenant=tenant).exists()


def test_configuration_needs_admin_tenant(make_user, tenant):
    designer = admin_client(make_user(tenant, roles=["workflow_designer"], is_staff=True))
    assert designer.get("/admin/connectors/connectorconfig/").status_code == 403
    assert (
        designer.post(
            "/admin/connectors/connectorconfig/add/", {"key": "slack", "config": json.dumps({"token": TOKEN})}
        ).status_code
        == 403
    )
    assert not ConnectorConfig.objects.filter(tenant=tenant).exists()
