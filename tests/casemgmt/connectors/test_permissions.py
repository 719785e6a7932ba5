"""Every connector endpoint as the owner, a member lacking the permission, another tenant and an
anonymous caller."""

from __future__ import annotations

import pytest

from casemgmt.connectors.models import Delivery
from shared.api.time import now_ms

pytestmark = pytest.mark.django_db

TEST_BODY = {"config": {"method": "GET", "url": "https://example.com/"}, "dryRun": True}
ENDPOINTS = [
    ("get", "/connectors", None, "connectors:read"),
    ("get", "/connectors/http/config", None, "admin:tenant"),
    ("put", "/connectors/http/config", {"config": {}}, "admin:tenant"),
    ("post", "/connectors/http/actions/request/test", TEST_BODY, "connectors:test"),
    ("get", "/connectors/invocations", None, "admin:tenant"),
    ("get", "/connectors/deliveries", None, "admin:tenant"),
]


def call(client, method, path, body):
    return (
        getattr(client, method)(path, body, format="json")
        if body is not None
        else getattr(client, method)(path)
    )


@pytest.mark.parametrize(("method", "path", "body", "permission"), ENDPOINTS)
def test_permission_matrix(api, admin_user, make_user, tenant, method, path, body, permission):
    assert call(api(admin_user), method, path, body).status_code == 200
    holder = make_user(tenant, permissions=[permission])
    assert call(api(holder), method, path, body).status_code == 200
    lacking = make_user(tenant, permissions=["cases:read", "tasks:read"])
    denied = call(api(lacking), method, path, body)
    assert denied.status_code == 403 and denied.json()["code"] == "permission_denied"
    anonymous = call(api(None), method, path, body)
    assert anonymous.status_code == 401 and anonymous.json()["code"] == "not_authenticated"


def dead_delivery(tenant) -> Delivery:
    return Delivery.objects.create(
        tenant=tenant, connector="http", action="request", inputs={"method": "GET", "url": "https://x.test/"},
        status=Delivery.DEAD, attempts=4, max_attempts=4, next_attempt_at=now_ms(), last_error="http_error",
    )  # fmt: skip


def test_replay_permissions(
    api, admin_user, make_user, tenant, other_tenant, django_capture_on_commit_callbacks
):
    delivery = dead_delivery(tenant)
    path = f"/connectors/deliveries/{delivery.pk}/replay"
    assert api(None).post(path).status_code == 401
    assert (
        api(make_user(tenant, permissions=["connectors:read", "connectors:test"])).post(path).status_code
        == 403
    )
    outsider = make_user(other_tenant, permissions=["admin:tenant"])
    assert api(outsider).post(path).status_code == 404
    assert api(admin_user).post("/connectors/deliveries/not-a-uuid/replay").status_code == 404
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        replayed = api(admin_user).post(path)
    assert replayed.status_code == 200 and replayed.json()["status"] == "pending" and len(callbacks) == 1
    again = api(admin_user).post(path)  # pending now: nothing to replay
    assert again.status_code == 409 and again.json()["code"] == "invalid_state"


def test_other_tenants_configuration_and_logs_are_invisible(api, admin_user, make_user, tenant, other_tenant):
    api(admin_user).put("/connectors/webhook/config", {"config": {"secret": "s3cr3t-value"}}, format="json")
    dead_delivery(tenant)
    outsider = make_user(other_tenant, permissions=["admin:tenant", "connectors:read"])
    assert api(outsider).get("/connectors/webhook/config").json() == {
        "key": "webhook",
        "config": {},
        "updatedAt": None,
    }
    assert api(outsider).get("/connectors/deliveries").json()["total"] == 0
    listing = api(outsider).get("/connectors").json()
    assert next(c for c in listing if c["key"] == "webhook")["configured"] is False
