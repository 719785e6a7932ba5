"""Delivery-time checks, run in-process on the real delivery code: SSRF re-check and no redirects."""

from __future__ import annotations

import socket
from datetime import timedelta

import pytest
from django.utils import timezone

from orchestrator.events.services import event_emit
from orchestrator.webhooks.delivery import delivery_attempt, retry_delay
from orchestrator.webhooks.models import Delivery
from orchestrator.webhooks.services import deliveries_sweep, events_dispatch, webhook_create
from shared import ssrf
from tests.orchestrator.webhooks.receiver import Receiver

pytestmark = pytest.mark.django_db


def one_delivery(url: str) -> Delivery:
    webhook_create(name="w", url=url, events=["dag.failed"], secret="s3cr3t", headers={}, filters={})
    event_emit(type="dag.failed", data={"run_id": "r1", "dag_id": "d", "status": "failed"})
    assert events_dispatch() == 1
    return Delivery.objects.get()


def test_private_target_is_refused_at_delivery_time(settings):
    with Receiver() as receiver:
        delivery = one_delivery(receiver.url + "/hook")  # registered while private targets were allowed
        settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
        assert delivery_attempt(delivery_id=str(delivery.id)) == "pending"  # will retry later
        (attempt,) = delivery.attempt_rows.all()
        assert attempt.error.startswith("refused:") and attempt.status_code is None
        assert receiver.received() == []


def test_a_closed_port_is_reported_as_a_refused_connection():
    with socket.socket() as sock:  # bound, never listening: a connection to it is refused
        sock.bind(("127.0.0.1", 0))
        delivery = one_delivery(f"http://127.0.0.1:{sock.getsockname()[1]}/hook")
        assert delivery_attempt(delivery_id=str(delivery.id)) == "pending"
    assert delivery.attempt_rows.get().error == "connection refused"


def test_redirects_are_not_followed():
    with Receiver(statuses=[302]) as receiver:
        delivery = one_delivery(receiver.url + "/hook")
        assert delivery_attempt(delivery_id=str(delivery.id)) == "pending"
        (attempt,) = delivery.attempt_rows.all()
        assert attempt.status_code == 302 and attempt.error == "redirect not followed"
        assert len(receiver.received()) == 1


def test_an_attempt_is_claimed_once():
    with Receiver() as receiver:
        delivery = one_delivery(receiver.url + "/hook")
        assert delivery_attempt(delivery_id=str(delivery.id)) == "succeeded"
        assert delivery_attempt(delivery_id=str(delivery.id)) is None  # a duplicate message does nothing
        assert len(receiver.received()) == 1


def test_not_yet_due_retry_is_not_claimed():
    with Receiver(statuses=[500]) as receiver:
        delivery = one_delivery(receiver.url + "/hook")
        Delivery.objects.filter(pk=delivery.pk).update(
            next_attempt_at=delivery.next_attempt_at.replace(year=2100)
        )
        assert delivery_attempt(delivery_id=str(delivery.id)) is None
        assert receiver.received() == []


def test_backoff_is_exponential(settings):
    settings.WEBHOOK_RETRY_BASE_SECONDS = 2
    assert [retry_delay(n) for n in (1, 2, 3, 4)] == [2, 4, 8, 16]


def test_sweep_recovers_lost_and_abandoned_deliveries(settings):
    """Deliveries whose task message was lost (broker restart) or whose worker died mid-attempt are
    made due again and re-queued."""
    settings.WEBHOOK_SWEEP_GRACE_SECONDS = 0
    with Receiver() as receiver:
        delivery = one_delivery(receiver.url + "/hook")
        past = timezone.now() - timedelta(minutes=5)
        Delivery.objects.filter(pk=delivery.pk).update(
            status="delivering", claimed_until=past, next_attempt_at=past
        )
        assert deliveries_sweep() == 1
        delivery.refresh_from_db()
        assert delivery.status == "pending" and delivery.claimed_until is None
        assert delivery_attempt(delivery_id=str(delivery.id)) == "succeeded"
        assert deliveries_sweep() == 0


def test_delivery_connects_to_the_checked_address_when_dns_changes_its_answer(monkeypatch):
    """DNS rebinding: the webhook's name resolves to a receiver on 127.0.0.1 at the delivery's check
    and to another server on 127.0.0.2 (same port) at every later lookup. The delivery reaches the
    checked address with its own name as Host; the other server gets nothing. (A client that looks
    the name up again when it connects reaches 127.0.0.2.)"""
    with Receiver() as checked:
        port = checked.server.server_address[1]
        with Receiver(host="127.0.0.2", port=port) as rebound:
            lookups: list[str] = []
            real = socket.getaddrinfo

            def changing_resolver(host, *args, **kwargs):
                if host != "rebind.test":
                    return real(host, *args, **kwargs)
                address = "127.0.0.1" if not lookups else "127.0.0.2"
                lookups.append(address)
                return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

            delivery = one_delivery(f"http://rebind.test:{port}/hook")
            # The outside system here is DNS: a resolver whose answer changes between lookups.
            monkeypatch.setattr(ssrf.socket, "getaddrinfo", changing_resolver)
            monkeypatch.setattr(socket, "getaddrinfo", changing_resolver)
            assert delivery_attempt(delivery_id=str(delivery.id)) == "succeeded"
            assert socket.getaddrinfo("rebind.test", port)[0][4][0] == "127.0.0.2"  # DNS did change
            (request,) = checked.received("/hook")
            assert request.headers["Host"] == f"rebind.test:{port}"
            assert rebound.received() == []
