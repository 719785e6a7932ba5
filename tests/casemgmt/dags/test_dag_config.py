"""`dag` steps without the orchestrator running: definition checks at publish, the `orchestrator`
connector's configuration (required keys, secrets redacted) and the callback's refusals."""

from __future__ import annotations

import hashlib
import hmac
import json
import time

import pytest

from tests.casemgmt.workflows.conftest import Flow, ok

pytestmark = pytest.mark.django_db


@pytest.fixture
def flow(api, admin_user) -> Flow:
    return Flow(api, admin_user)


CONFIG = {"url": "http://127.0.0.1:1", "apiKey": "ork_secret_key", "webhookSecret": "cb-secret"}


def publish_problems(flow: Flow, step: dict) -> list[str]:
    body = {"caseTypeKey": flow.key, "name": "Flow", "steps": [{"id": "run", "name": "Run", **step}]}
    draft = ok(flow.client.post("/workflows", body, format="json"), 201)
    response = flow.client.post(f"/workflows/{draft['id']}/publish")
    assert response.status_code == 400, response.content
    return [e["field"] for e in response.json()["details"]["errors"]]


@pytest.mark.parametrize(
    ("step", "field"),
    [
        ({"type": "dag"}, "steps[0].dagId"),
        ({"type": "dag", "dagId": "a", "taskId": "b"}, "steps[0].dagId"),
        ({"type": "dag", "dagId": "a", "parameters": ["x"]}, "steps[0].parameters"),
        ({"type": "dag", "dagId": "a", "parameters": {"t.X": "{{ case_data.x"}}, "steps[0].parameters.t.X"),
        ({"type": "dag", "taskId": "a", "timeoutSeconds": 0}, "steps[0].timeoutSeconds"),
        ({"type": "dag", "taskId": "a", "onFailure": "retry"}, "steps[0].onFailure"),
    ],
)
def test_publish_checks_dag_steps(flow, step, field):
    assert field in publish_problems(flow, step)


def test_configuration_needs_its_keys_and_hides_its_secrets(flow):
    response = flow.client.put(
        "/connectors/orchestrator/config", {"config": {"url": "http://o"}}, format="json"
    )
    assert response.status_code == 400
    fields = {e["field"] for e in response.json()["details"]["errors"]}
    assert {"config.apiKey", "config.webhookSecret"} <= fields
    ok(flow.client.put("/connectors/orchestrator/config", {"config": CONFIG}, format="json"))
    shown = ok(flow.client.get("/connectors/orchestrator/config"))
    assert "ork_secret_key" not in json.dumps(shown) and "cb-secret" not in json.dumps(shown)


def sign(secret: str, timestamp: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()


def post_callback(client, tenant_id, body: bytes, signature: str, timestamp: str):
    return client.post(
        f"/webhooks/orchestrator/{tenant_id}", body, content_type="application/json",
        HTTP_X_SERVICE_TIMESTAMP=timestamp, HTTP_X_SERVICE_SIGNATURE_TIMESTAMPED=signature,
    )  # fmt: skip


def test_callback_refusals(flow, api, other_tenant):
    ok(flow.client.put("/connectors/orchestrator/config", {"config": CONFIG}, format="json"))
    anonymous = api(None)
    body = json.dumps({"event": "dag.completed", "data": {"run_id": "case-x"}}).encode()
    now = str(int(time.time()))
    tenant_id = flow.admin.tenant_id
    # Unsigned, or signed with another secret: 401.
    assert post_callback(anonymous, tenant_id, body, "", now).status_code == 401
    assert post_callback(anonymous, tenant_id, body, sign("other", now, body), now).status_code == 401
    # A tenant without an orchestrator: 404, whatever the signature.
    assert (
        post_callback(anonymous, other_tenant.id, body, sign("cb-secret", now, body), now).status_code == 404
    )
    # Signed and fresh but for no waiting run: accepted, nothing applied; the same bytes again too.
    first = post_callback(anonymous, tenant_id, body, sign("cb-secret", now, body), now)
    assert first.status_code == 200 and first.json() == {"applied": False}
    assert post_callback(anonymous, tenant_id, b"{", sign("cb-secret", now, b"{"), now).json() == {
        "applied": False
    }
