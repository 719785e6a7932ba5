"""Signed inbound deliveries cannot be replayed: Standard Webhooks and the timestamped `sha256=`
form are dated (5 minutes either way) and their signed id is taken once; the body-only
`X-Webhook-Signature` form is taken once by its signature. A repeat is 202 `duplicate` with no
effect; a bad, missing or stale signature is 401."""

from __future__ import annotations

import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from threading import Barrier

import pytest
from django.db import connection

from casemgmt.cases.models import Case
from casemgmt.webhooks.models import InboundDelivery
from shared import signing
from tests.casemgmt.webhooks.test_inbound import SECRET, configure, deliver
from tests.casemgmt.workflows.conftest import Flow, ok, task_step

pytestmark = pytest.mark.django_db
STANDARD_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


@pytest.fixture
def flow(api, admin_user) -> Flow:
    flow = Flow(api, admin_user)
    flow.workflow([task_step("triage")])
    return flow


def raw(payload) -> bytes:
    return json.dumps(payload).encode()


def standard(hook, payload, *, secret=STANDARD_SECRET, msg_id=None, at=None, body=None, signature=None):
    """A Standard Webhooks delivery; `body` sends other bytes than the ones signed."""
    msg_id = msg_id or f"msg_{uuid.uuid4().hex}"
    timestamp = str(int(time.time()) if at is None else at)
    signed = raw(payload)
    signature = signature or signing.standard_sign(secret, msg_id, timestamp, signed)
    return deliver(hook, body if body is not None else signed, HTTP_WEBHOOK_ID=msg_id,
                   HTTP_WEBHOOK_TIMESTAMP=timestamp, HTTP_WEBHOOK_SIGNATURE=signature)  # fmt: skip


def cases(flow) -> int:
    return Case.objects.filter(tenant_id=flow.admin.tenant_id, case_type__key=flow.key).count()


def test_a_standard_signature_is_accepted_and_its_id_taken_once(flow):
    hook = configure(flow, secret=STANDARD_SECRET)
    first = standard(hook, {"subject": "Genuine"}, msg_id="msg_1")
    assert first.status_code == 202 and ok(first, 202)["status"] == "created", first.content
    assert first.json()["deliveryId"] == "msg_1"
    # The same id again, even re-signed under a fresh timestamp (a sender's retry): no effect.
    again = standard(hook, {"subject": "Genuine"}, msg_id="msg_1", at=int(time.time()) + 1)
    assert ok(again, 202)["status"] == "duplicate" and again.json()["caseId"] == first.json()["caseId"]
    assert cases(flow) == 1


def test_rotating_senders_may_offer_several_signatures(flow):
    hook = configure(flow, secret=STANDARD_SECRET)
    msg_id, timestamp, body = "msg_rot", str(int(time.time())), raw({"subject": "Rotating"})
    good = signing.standard_sign(STANDARD_SECRET, msg_id, timestamp, body)
    old = signing.standard_sign("whsec_" + "b2xkLXNlY3JldC1ieXRlcw==", msg_id, timestamp, body)
    response = deliver(hook, body, HTTP_WEBHOOK_ID=msg_id, HTTP_WEBHOOK_TIMESTAMP=timestamp,
                       HTTP_WEBHOOK_SIGNATURE=f"{old} {good}")  # fmt: skip
    assert ok(response, 202)["status"] == "created"


@pytest.mark.parametrize("offset", [-301, -3600, 301])
def test_a_timestamp_outside_five_minutes_is_refused(flow, offset):
    hook = configure(flow, secret=STANDARD_SECRET)
    response = standard(hook, {"subject": "Stale"}, at=int(time.time()) + offset)
    assert response.status_code == 401 and response.json()["code"] == "not_authenticated"
    assert "webhook-timestamp" in response.json()["message"] and cases(flow) == 0


def test_a_tampered_or_unsigned_standard_delivery_is_refused(flow):
    hook = configure(flow, secret=STANDARD_SECRET)
    tampered = standard(hook, {"subject": "Genuine"}, body=raw({"subject": "Forged"}))
    wrong_key = standard(hook, {"subject": "Forged"}, secret="whsec_" + "d3Jvbmcta2V5LWJ5dGVz")
    no_id = deliver(hook, raw({"subject": "x"}), HTTP_WEBHOOK_TIMESTAMP=str(int(time.time())),
                    HTTP_WEBHOOK_SIGNATURE="v1,AAAA")  # fmt: skip
    for response in (tampered, wrong_key, no_id):
        assert response.status_code == 401 and response.json()["code"] == "not_authenticated"
    assert cases(flow) == 0 and not InboundDelivery.objects.filter(webhook_id=hook["id"]).exists()


def test_a_body_only_signature_is_taken_once(flow):
    hook = configure(flow, secret=SECRET)
    first = deliver(hook, {"subject": "Once"}, secret=SECRET)
    assert ok(first, 202)["status"] == "created"
    replayed = deliver(hook, {"subject": "Once"}, secret=SECRET)
    # A new unsigned delivery id or another spelling of the signature does not make it new.
    renamed = deliver(hook, {"subject": "Once"}, secret=SECRET, delivery="fresh-id")
    digest = signing.sha256_hex(SECRET, raw({"subject": "Once"}))
    shouted = deliver(hook, {"subject": "Once"}, signature=f"sha256= {digest.upper()}")
    for response in (replayed, renamed, shouted):
        assert ok(response, 202)["status"] == "duplicate"
        assert response.json()["caseId"] == first.json()["caseId"]
    assert cases(flow) == 1
    # Another body is another delivery.
    assert ok(deliver(hook, {"subject": "Twice"}, secret=SECRET), 202)["status"] == "created"


def test_the_timestamped_sha256_form(flow):
    hook = configure(flow, secret=SECRET)

    def send(msg_id, at, payload=None, signed_payload=None):
        timestamp = str(at)
        message = signing.timestamped(timestamp, raw(signed_payload or payload), msg_id=msg_id)
        return deliver(hook, raw(payload), signature=signing.sha256_sign(SECRET, message),
                       HTTP_X_WEBHOOK_ID=msg_id, HTTP_X_WEBHOOK_TIMESTAMP=timestamp)  # fmt: skip

    now = int(time.time())
    assert ok(send("evt-1", now, {"subject": "Dated"}), 202)["status"] == "created"
    assert ok(send("evt-1", now + 2, {"subject": "Dated"}), 202)["status"] == "duplicate"
    assert send("evt-2", now - 400, {"subject": "Old"}).status_code == 401
    assert send("evt-3", now, {"subject": "Forged"}, signed_payload={"subject": "Real"}).status_code == 401
    assert cases(flow) == 1


def test_a_webhook_may_require_standard_webhooks(flow):
    hook = configure(flow, secret=STANDARD_SECRET, signatureScheme="standard")
    assert hook["signatureScheme"] == "standard"
    legacy = deliver(hook, {"subject": "Legacy"}, secret=STANDARD_SECRET)
    assert legacy.status_code == 401 and "Standard Webhooks" in legacy.json()["message"]
    assert ok(standard(hook, {"subject": "Standard"}), 202)["status"] == "created"
    # Without a secret nothing could be verified.
    unsigned = flow.client.post(
        "/admin/webhooks/inbound",
        {"path": "plain", "caseTypeKey": flow.key, "signatureScheme": "standard"},
        format="json",
    )
    assert unsigned.status_code == 400 and unsigned.json()["code"] == "validation_error"
    removed = flow.client.put(f"/admin/webhooks/inbound/{hook['id']}", {"secret": None}, format="json")
    assert removed.status_code == 400
    relaxed = ok(
        flow.client.put(f"/admin/webhooks/inbound/{hook['id']}", {"signatureScheme": "any"}, format="json")
    )
    assert relaxed["signatureScheme"] == "any"
    # New webhooks take every form, so senders of the body-only signature keep working.
    assert configure(flow, secret=SECRET)["signatureScheme"] == "any"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("form", ["standard", "body-only"])
def test_racing_replays_make_one_case(api, admin_user, form):
    flow = Flow(api, admin_user)
    flow.workflow([task_step("triage")])
    hook = configure(flow, secret=STANDARD_SECRET)
    msg_id, timestamp, body = "msg_race", str(int(time.time())), raw({"subject": "Raced"})
    if form == "standard":
        headers = {"HTTP_WEBHOOK_ID": msg_id, "HTTP_WEBHOOK_TIMESTAMP": timestamp,
                   "HTTP_WEBHOOK_SIGNATURE": signing.standard_sign(STANDARD_SECRET, msg_id, timestamp, body)}  # fmt: skip
    else:
        headers = {"signature": signing.sha256_sign(STANDARD_SECRET, body)}
    barrier = Barrier(4)

    def send(_: int) -> tuple[int, str]:
        try:
            barrier.wait()
            response = deliver(hook, body, **headers)
            return response.status_code, response.json()["status"]
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(send, range(4)))
    assert sorted(results) == [(202, "created")] + [(202, "duplicate")] * 3
    assert cases(flow) == 1
    assert InboundDelivery.objects.filter(webhook_id=hook["id"]).count() == 1
