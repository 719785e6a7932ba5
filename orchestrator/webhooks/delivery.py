"""One delivery attempt: claim, POST the stored body, record the attempt, schedule a retry.

The claim is a conditional UPDATE (status pending and due), committed before the HTTP call, so a
duplicated task message or a re-queue by the sweep never sends the same attempt twice, and no
database transaction is held open while waiting on the receiver.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

import urllib3
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from orchestrator.webhooks import queue
from orchestrator.webhooks.guard import UnsafeTarget, check_url
from orchestrator.webhooks.models import Delivery, DeliveryAttempt
from orchestrator.webhooks.payloads import signature
from shared import backoff, crypto, signing
from shared.ssrf import network_failure, pinned_request

logger = logging.getLogger(__name__)
USER_AGENT = "orchestrator-webhooks/1"
EARLY_TOLERANCE = timedelta(seconds=1)  # a Celery countdown may fire a little early


def _claim(delivery_id: str) -> bool:
    now = timezone.now()
    lease = timedelta(seconds=settings.WEBHOOK_TIMEOUT_SECONDS + 30)
    return bool(
        Delivery.objects.filter(
            pk=delivery_id, status=Delivery.PENDING, next_attempt_at__lte=now + EARLY_TOLERANCE
        ).update(status=Delivery.DELIVERING, attempts=F("attempts") + 1, claimed_until=now + lease)
    )


def retry_delay(attempt: int) -> float:
    """Exponential backoff: base, 2*base, 4*base, ..."""
    return backoff.exponential(attempt, base=settings.WEBHOOK_RETRY_BASE_SECONDS)


def build_headers(delivery: Delivery, body: bytes) -> dict[str, str]:
    """`X-Service-Signature` signs the body alone; `X-Service-Signature-Timestamped` signs
    `<X-Service-Timestamp>.<body>`, so a receiver that checks the timestamp window knows the
    timestamp is ours (a captured delivery cannot be replayed later under a fresh timestamp)."""
    webhook = delivery.webhook
    secret = crypto.decrypt_text(webhook.secret_encrypted)
    timestamp = str(int(time.time()))
    headers = dict(crypto.decrypt_json(webhook.headers_encrypted))
    headers.update(
        {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "X-Service-Event": delivery.event.type,
            "X-Service-Delivery": str(delivery.id),
            "X-Service-Timestamp": timestamp,
            "X-Service-Signature": signature(secret, body),
            "X-Service-Signature-Timestamped": signature(secret, signing.timestamped(timestamp, body)),
        }
    )
    return headers


def _send(delivery: Delivery) -> tuple[int | None, str]:
    """Returns (status code or None, error text). The error text never includes headers or secret.
    The URL is checked again here (DNS may have changed) and the request goes to the address that
    check resolved: no second lookup."""
    body = delivery.body.encode("utf-8")
    try:
        target = check_url(delivery.webhook.url)
    except UnsafeTarget as exc:
        return None, f"refused: {exc}"
    try:
        response = pinned_request(
            target, "POST", build_headers(delivery, body), body, float(settings.WEBHOOK_TIMEOUT_SECONDS)
        )
        response.drain_conn()  # the receiver's answer body is not kept
        response.release_conn()
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        return None, network_failure(exc, float(settings.WEBHOOK_TIMEOUT_SECONDS))[1]
    if 200 <= response.status < 300:
        return response.status, ""
    if 300 <= response.status < 400:
        return response.status, "redirect not followed"
    return response.status, f"HTTP {response.status}"


def delivery_attempt(*, delivery_id: str) -> str | None:
    """Performs the next attempt of a due delivery. Returns its new status, or None if not claimed."""
    if not _claim(delivery_id):
        return None
    delivery = Delivery.objects.select_related("webhook", "event").get(pk=delivery_id)
    started = timezone.now()
    clock = time.perf_counter()
    status_code, error = _send(delivery)
    latency_ms = round((time.perf_counter() - clock) * 1000, 3)
    return _record(delivery, started=started, status_code=status_code, error=error, latency_ms=latency_ms)


@transaction.atomic
def _record(delivery: Delivery, *, started, status_code: int | None, error: str, latency_ms: float) -> str:
    ok = not error
    DeliveryAttempt.objects.create(
        delivery=delivery,
        number=delivery.attempts,
        started_at=started,
        status_code=status_code,
        latency_ms=latency_ms,
        error=error,
        succeeded=ok,
    )
    now = timezone.now()
    if ok:
        new_status, next_at = Delivery.SUCCEEDED, delivery.next_attempt_at
    elif delivery.attempts >= settings.WEBHOOK_MAX_ATTEMPTS:
        new_status, next_at = Delivery.FAILED, delivery.next_attempt_at
    else:
        delay = retry_delay(delivery.attempts)
        new_status, next_at = Delivery.PENDING, now + timedelta(seconds=delay)
        transaction.on_commit(lambda: queue.enqueue_deliveries([str(delivery.id)], countdown=delay))
    Delivery.objects.filter(pk=delivery.pk).update(
        status=new_status,
        next_attempt_at=next_at,
        claimed_until=None,
        completed_at=now if new_status in (Delivery.SUCCEEDED, Delivery.FAILED) else None,
    )
    logger.info(
        "webhook delivery %s attempt %d: %s (%s)",
        delivery.id,
        delivery.attempts,
        new_status,
        status_code or error,
    )
    return new_status
