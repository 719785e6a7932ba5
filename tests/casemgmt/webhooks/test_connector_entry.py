"""The connector registry declares the inbound webhook receiver, which no step may invoke."""

import pytest

from casemgmt.connectors.base import ConnectorError, InvocationContext
from casemgmt.connectors.registry import connector_get


def test_webhook_inbound_is_declared_and_not_invocable():
    connector = connector_get("webhook_inbound")
    assert connector is not None and connector.listed and not connector.invocable
    assert list(connector.actions) == ["receive"]
    context = InvocationContext(
        tenant_id=None, connector="webhook_inbound", action="receive", idempotency_key="k", http=None
    )
    with pytest.raises(ConnectorError) as refused:
        connector.invoke("receive", {}, {}, context)
    assert refused.value.code == "invalid_input" and not refused.value.transient


@pytest.mark.django_db
def test_catalogue_shows_it_and_its_action_cannot_be_test_called(api, admin_user):
    listing = {c["key"]: c for c in api(admin_user).get("/connectors").json()}
    assert [a["name"] for a in listing["webhook_inbound"]["actions"]] == ["receive"]
    called = api(admin_user).post(
        "/connectors/webhook_inbound/actions/receive/test", {"config": {}, "context": {}}, format="json"
    )
    assert called.status_code == 404 and called.json()["code"] == "not_found"
