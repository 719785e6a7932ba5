"""Connector endpoints in process: catalogue, configuration (encrypted, redacted, rotated), test
calls (dry run and live against a real local server), logs and permissions."""

from __future__ import annotations

import io
import json
import logging

import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command
from django.db import connection

from casemgmt.audit.models import AuditEvent
from casemgmt.connectors.models import ConnectorConfig, Invocation

pytestmark = pytest.mark.django_db

SECRET = "hmac-secret-value-123"


def test_catalogue_lists_connectors_from_the_registry(api, admin_user):
    listing = api(admin_user).get("/connectors")
    assert listing.status_code == 200, listing.content
    by_key = {c["key"]: c for c in listing.json()}
    http = by_key["http"]
    assert http["displayName"] and http["description"] and http["requiresAuth"] is False
    [request] = http["actions"]
    assert request["name"] == "request" and request["inputs"]["method"]["enum"] == [
        "GET", "POST", "PUT", "PATCH", "DELETE",
    ]  # fmt: skip
    assert {"url", "headers", "body", "timeout"} <= set(request["inputs"])
    assert [a["name"] for a in by_key["webhook"]["actions"]] == ["send"]


def test_config_is_encrypted_at_rest_and_redacted(api, admin_user, tenant):
    client = api(admin_user)
    put = client.put(
        "/connectors/webhook/config",
        {"config": {"webhookUrl": "https://hooks.example.com/abc", "secret": SECRET}},
        format="json",
    )
    assert put.status_code == 200, put.content
    body = put.json()
    assert body["key"] == "webhook" and body["updatedAt"].endswith("Z")
    assert body["config"] == {"webhookUrl": "***", "secret": "***"}
    assert client.get("/connectors/webhook/config").json()["config"] == {"webhookUrl": "***", "secret": "***"}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT config_encrypted FROM connectors_connectorconfig WHERE tenant_id = %s", [tenant.id]
        )
        [(raw,)] = cursor.fetchall()
    assert SECRET not in raw and "hooks.example.com" not in raw and raw.startswith("gAAAA")
    event = AuditEvent.objects.get(tenant_id=tenant.id, action="connector:configured")
    assert event.resource == "connectors/webhook" and SECRET not in json.dumps(event.changes)


def test_masked_secret_written_back_keeps_stored_value(api, admin_user, tenant):
    client = api(admin_user)
    client.put("/connectors/webhook/config", {"config": {"secret": SECRET}}, format="json")
    client.put(
        "/connectors/webhook/config",
        {"config": {"secret": "***", "webhookUrl": "https://x.example"}},
        format="json",
    )
    from casemgmt.connectors.selectors import connector_config_values

    assert connector_config_values(tenant_id=tenant.id, key="webhook")["secret"] == SECRET


def test_config_validation(api, admin_user):
    client = api(admin_user)
    bad = client.put("/connectors/webhook/config", {"config": {"nope": 1}}, format="json")
    assert bad.status_code == 400 and bad.json()["details"]["field"] == "config.nope"
    wrong_type = client.put("/connectors/webhook/config", {"config": {"secret": 5}}, format="json")
    assert wrong_type.status_code == 400
    assert client.put("/connectors/webhook/config", {"config": []}, format="json").status_code == 400
    assert client.put("/connectors/nope/config", {"config": {}}, format="json").status_code == 404
    assert client.get("/connectors/nope/config").status_code == 404


def test_key_rotation(api, admin_user, tenant, settings):
    old_key = settings.FIELD_ENCRYPTION_KEYS[0]
    api(admin_user).put("/connectors/webhook/config", {"config": {"secret": SECRET}}, format="json")
    before = ConnectorConfig.objects.get(tenant=tenant).config_encrypted
    new_key = Fernet.generate_key().decode()
    settings.FIELD_ENCRYPTION_KEYS = [new_key, old_key]
    # Still readable with the old key second in the list.
    assert api(admin_user).get("/connectors/webhook/config").json()["config"] == {"secret": "***"}
    call_command("rotate_connector_keys", stdout=io.StringIO())
    after = ConnectorConfig.objects.get(tenant=tenant).config_encrypted
    assert after != before
    assert json.loads(Fernet(new_key.encode()).decrypt(after.encode()))["secret"] == SECRET
    settings.FIELD_ENCRYPTION_KEYS = [new_key]  # the old key can now be dropped
    from casemgmt.connectors.selectors import connector_config_values

    assert connector_config_values(tenant_id=tenant.id, key="webhook") == {"secret": SECRET}


def test_write_re_encrypts_with_the_new_key(api, admin_user, tenant, settings):
    old_key = settings.FIELD_ENCRYPTION_KEYS[0]
    api(admin_user).put("/connectors/webhook/config", {"config": {"secret": SECRET}}, format="json")
    new_key = Fernet.generate_key().decode()
    settings.FIELD_ENCRYPTION_KEYS = [new_key, old_key]
    api(admin_user).put(
        "/connectors/webhook/config",
        {"config": {"secret": "***", "webhookUrl": "https://a.example"}},
        format="json",
    )
    raw = ConnectorConfig.objects.get(tenant=tenant).config_encrypted
    assert json.loads(Fernet(new_key.encode()).decrypt(raw.encode()))["secret"] == SECRET


def test_dry_run_resolves_expressions(api, admin_user, tenant):
    body = {
        "config": {"method": "POST", "url": "https://api.example.com/c/{{case_number}}",
                   "body": {"name": "{{case_data.applicant.name}}", "big": "{{#if (gt case_data.amount 100)}}yes{{else}}no{{/if}}"}},
        "context": {"case_data": {"applicant": {"name": "Ada"}, "amount": 500}, "case_number": "C-7"},
        "dryRun": True,
    }  # fmt: skip
    response = api(admin_user).post("/connectors/http/actions/request/test", body, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["success"] is True
    resolved = response.json()["result"]["resolved"]
    assert resolved["url"] == "https://api.example.com/c/C-7"
    assert resolved["body"] == {"name": "Ada", "big": "yes"} and resolved["method"] == "POST"
    assert not Invocation.objects.filter(tenant_id=tenant.id).exists()  # nothing was sent
    tested = AuditEvent.objects.get(tenant_id=tenant.id, action="connector:tested")
    assert tested.changes == {"action": "request", "dryRun": True, "success": True}


def test_dry_run_keeps_a_key_whose_template_renders_empty(api, admin_user):
    body = {
        "config": {"method": "POST", "url": "https://api.example.com/c", "body": "{{#unless case_data.quiet}}hello{{/unless}}"},
        "context": {"case_data": {"quiet": True}},
        "dryRun": True,
    }  # fmt: skip
    response = api(admin_user).post("/connectors/http/actions/request/test", body, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["result"]["resolved"]["body"] == ""


def test_test_call_validation(api, admin_user):
    client = api(admin_user)
    missing = client.post(
        "/connectors/http/actions/request/test", {"config": {"method": "GET"}, "dryRun": True}, format="json"
    )
    assert missing.status_code == 400 and missing.json()["details"]["field"] == "config.url"
    bad_method = client.post("/connectors/http/actions/request/test",
                             {"config": {"method": "TRACE", "url": "https://x.example"}, "dryRun": True}, format="json")  # fmt: skip
    assert bad_method.status_code == 400 and bad_method.json()["details"]["field"] == "config.method"
    bad_template = client.post("/connectors/http/actions/request/test",
                               {"config": {"method": "GET", "url": "{{#if}}"}, "dryRun": True}, format="json")  # fmt: skip
    assert bad_template.status_code == 400
    assert client.post("/connectors/http/actions/nope/test", {}, format="json").status_code == 404
    assert client.post("/connectors/nope/actions/request/test", {}, format="json").status_code == 404
    assert (
        client.post(
            "/connectors/http/actions/request/test", {"config": {}, "context": "x"}, format="json"
        ).status_code
        == 400
    )


def test_live_test_call_logs_and_redacts(api, admin_user, tenant, receiver, allow_local, caplog):
    client = api(admin_user)
    client.put(
        "/connectors/http/config", {"config": {"headers": {"X-Api-Key": "k-very-secret-1"}}}, format="json"
    )
    # `headers` is not a secret key of `http`: its values show; a header named like a credential is
    # still redacted in the invocation log.
    body = {"config": {"method": "PUT", "url": f"{receiver.url}/echo", "headers": {"Authorization": "Bearer tok-abcdef"},
                       "body": {"n": "{{case_number}}"}}, "context": {"case_number": "C-9"}}  # fmt: skip
    with caplog.at_level(logging.INFO):
        response = client.post("/connectors/http/actions/request/test", body, format="json")
    assert response.status_code == 200, response.content
    out = response.json()
    assert out["success"] is True and out["error"] is None and out["result"]["statusCode"] == 200
    assert out["result"]["body"]["method"] == "PUT"
    got = receiver.received("/echo")[-1]
    assert got.json() == {"n": "C-9"} and got.headers["Authorization"] == "Bearer tok-abcdef"
    assert got.headers["X-Api-Key"] == "k-very-secret-1"
    log = client.get("/connectors/invocations").json()
    [row] = log["data"]
    assert row["source"] == "test" and row["method"] == "PUT" and row["statusCode"] == 200
    assert row["requestHeaders"]["Authorization"] == "***" and row["requestHeaders"]["X-Api-Key"] == "***"
    assert row["url"] == f"{receiver.url}/echo" and '"method": "PUT"' in row["responseExcerpt"]
    assert "tok-abcdef" not in caplog.text and "k-very-secret-1" not in caplog.text


def test_live_test_call_failure_is_200_with_error(api, admin_user, receiver, allow_local):
    client = api(admin_user)
    failed = client.post("/connectors/http/actions/request/test",
                         {"config": {"method": "GET", "url": f"{receiver.url}/status/404"}}, format="json")  # fmt: skip
    assert failed.status_code == 200
    out = failed.json()
    assert out["success"] is False and out["error"]["code"] == "http_error"
    assert out["result"] == {"statusCode": 404, "body": {"error": "scripted"}}


def test_live_test_call_refuses_private_targets(api, admin_user, settings):
    settings.CONNECTOR_ALLOWED_HOSTS = []
    out = api(admin_user).post("/connectors/http/actions/request/test",
                               {"config": {"method": "GET", "url": "http://127.0.0.1:9/"}}, format="json").json()  # fmt: skip
    assert out["success"] is False and out["error"]["code"] == "unsafe_target" and out["result"] is None


def test_webhook_secret_never_in_responses_or_logs(api, admin_user, receiver, allow_local, caplog):
    client = api(admin_user)
    client.put("/connectors/webhook/config", {"config": {"secret": SECRET}}, format="json")
    with caplog.at_level(logging.DEBUG):
        out = client.post("/connectors/webhook/actions/send/test",
                          {"config": {"url": f"{receiver.url}/echo?s=" + SECRET}}, format="json")  # fmt: skip
    assert out.status_code == 200 and out.json()["success"] is True
    everything = out.content.decode() + caplog.text + client.get("/connectors/invocations").content.decode()
    everything += client.get("/connectors/webhook/config").content.decode()
    assert SECRET not in everything


def test_invocation_list_paging(api, admin_user):
    client = api(admin_user)
    assert client.get("/connectors/invocations?limit=501").status_code == 400
    assert client.get("/connectors/invocations?caseId=x").status_code == 400
    assert client.get("/connectors/deliveries?status=weird").status_code == 400
    assert client.get("/connectors/deliveries").json() == {"data": [], "total": 0, "limit": 50, "offset": 0}


def test_metrics_expose_connector_series(api, admin_user, client, receiver, allow_local):
    api(admin_user).post("/connectors/http/actions/request/test",
                         {"config": {"method": "GET", "url": f"{receiver.url}/status/500"}}, format="json")  # fmt: skip
    text = client.get("/metrics").content.decode()
    assert 'service_connector_invocations_total{action="request",connector="http"} 1.0' in text
    assert 'service_connector_errors_total{action="request",connector="http"} 1.0' in text
    assert 'service_connector_latency_seconds_count{action="request",connector="http"} 1.0' in text


def test_openapi_documents_the_connector_endpoints(api):
    paths = api(None).get("/openapi.json").json()["paths"]
    assert {"/connectors", "/connectors/{key}/config", "/connectors/{key}/actions/{action}/test",
            "/connectors/invocations", "/connectors/deliveries", "/connectors/deliveries/{delivery_id}/replay"} <= set(paths)  # fmt: skip
    assert paths["/connectors/{key}/actions/{action}/test"]["post"]["responses"]["200"]


def test_invocations_and_deliveries_newest_first(api, admin_user, tenant, receiver, allow_local):
    client = api(admin_user)
    for path in ("/status/201", "/status/202"):
        client.post("/connectors/http/actions/request/test",
                    {"config": {"method": "GET", "url": f"{receiver.url}{path}"}}, format="json")  # fmt: skip
    assert [r["statusCode"] for r in client.get("/connectors/invocations").json()["data"]] == [202, 201]
    page = client.get("/connectors/invocations?limit=1&offset=1").json()
    assert page["total"] == 2 and [r["statusCode"] for r in page["data"]] == [201]


def test_config_whose_key_was_dropped(api, admin_user, settings):
    client = api(admin_user)
    client.put("/connectors/webhook/config", {"config": {"secret": SECRET}}, format="json")
    settings.FIELD_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]  # the old key dropped too early
    unreadable = client.get("/connectors/webhook/config")
    assert unreadable.status_code == 503 and unreadable.json()["code"] == "not_configured"
    replaced = client.put(
        "/connectors/webhook/config", {"config": {"secret": "new-secret-value"}}, format="json"
    )
    assert replaced.status_code == 200 and client.get("/connectors/webhook/config").json()["config"] == {
        "secret": "***"
    }
