"""Webhook registrations, and the outbox dispatcher that turns events into deliveries."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from orchestrator.audit.services import SYSTEM_ACTOR, record
from orchestrator.events.models import Event
from orchestrator.webhooks import queue
from orchestrator.webhooks.models import Delivery, Webhook
from orchestrator.webhooks.payloads import payload_body
from shared import crypto
from shared.api import errors
from shared.api.time import now_ms

logger = logging.getLogger(__name__)


@transaction.atomic
def webhook_create(
    *,
    name: str,
    url: str,
    events: list[str],
    secret: str,
    headers: dict[str, str],
    filters: dict[str, str],
    actor: str = SYSTEM_ACTOR,
) -> Webhook:
    webhook = Webhook.objects.create(
        name=name,
        url=url,
        events=sorted(set(events)),
        filters=filters,
        secret_encrypted=crypto.encrypt_text(secret),
        headers_encrypted=crypto.encrypt_json(headers),
        created_at=now_ms(),
    )
    # Never the secret or the headers (they carry credentials): header names at most.
    changes = {
        "name": name,
        "url": url,
        "events": webhook.events,
        "filters": filters,
        "headers": sorted(headers),
    }
    record(actor=actor, action="webhook.created", resource=f"webhooks/{webhook.id}", changes=changes)
    return webhook


@transaction.atomic
def webhook_delete(*, webhook_id: str, actor: str = SYSTEM_ACTOR) -> None:
    deleted, _ = Webhook.objects.filter(pk=webhook_id).delete()
    if not deleted:
        raise errors.NotFound(f"Webhook {webhook_id} not found.")
    record(actor=actor, action="webhook.deleted", resource=f"webhooks/{webhook_id}")


def _filters_match(filters: dict[str, Any], event: Event) -> bool:
    # Deliver when the registration's filters (dag_id, task_id) match the event.
    for key, wanted in (filters or {}).items():
        actual = getattr(event, key, "") or ""
        allowed = wanted if isinstance(wanted, list) else [wanted]
        if actual not in allowed:
            return False
    return True


def matching_webhooks(event: Event, webhooks: list[Webhook]) -> list[Webhook]:
    return [w for w in webhooks if event.type in w.events and _filters_match(w.filters, event)]


def events_dispatch(*, batch_size: int | None = None) -> int:
    """Claims undispatched outbox events (SKIP LOCKED, so dispatchers never double-claim), creates one
    delivery per matching registration and marks the events dispatched, all in one transaction.
    Returns how many events were claimed; the delivery tasks are sent on commit."""
    batch_size = batch_size or settings.WEBHOOK_DISPATCH_BATCH_SIZE
    with transaction.atomic():
        webhooks = list(Webhook.objects.all())
        if not webhooks:
            return _events_mark_dispatched(batch_size)
        claimed = list(
            Event.objects.select_for_update(skip_locked=True)
            .filter(dispatched_at__isnull=True)
            .order_by("id")[:batch_size]
        )
        if not claimed:
            return 0
        now = now_ms()
        deliveries = [
            Delivery(webhook=w, event=e, body=payload_body(e), next_attempt_at=now, created_at=now)
            for e in claimed
            for w in matching_webhooks(e, webhooks)
        ]
        Delivery.objects.bulk_create(deliveries, ignore_conflicts=True)
        Event.objects.filter(pk__in=[e.pk for e in claimed]).update(dispatched_at=now)
        ids = [str(d.id) for d in deliveries]
        transaction.on_commit(lambda: queue.enqueue_deliveries(ids))
    return len(claimed)


# With no webhook registered, no event has anywhere to go. Events are written dispatched already
# then (events.services); what is left undispatched (written while a registration existed, or before
# that rule) is marked in one statement per batch, without reading the events.
MARK_DISPATCHED_SQL = """
UPDATE orch_events_event SET dispatched_at = %s
 WHERE id IN (SELECT id FROM orch_events_event WHERE dispatched_at IS NULL
               ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED)
"""


def _events_mark_dispatched(batch_size: int) -> int:
    if connection.vendor != "postgresql":  # SQLite: one writer at a time, no row locks to skip
        ids = Event.objects.filter(dispatched_at__isnull=True).order_by("id").values_list("id", flat=True)
        return Event.objects.filter(pk__in=list(ids[:batch_size])).update(dispatched_at=now_ms())
    with connection.cursor() as cursor:
        cursor.execute(MARK_DISPATCHED_SQL, [now_ms(), batch_size])
        return cursor.rowcount


def events_prune(*, batch_size: int = 1000, max_batches: int = 20) -> int:
    """Deletes outbox events older than ORCH_EVENT_RETENTION_DAYS (0 keeps them all), from the oldest,
    in batches of `batch_size`, each its own short transaction (row locks on one batch, never a
    table lock), at most `max_batches` per call: the recovery sweep calls it every interval, so a
    large backlog drains over a few sweeps without one long transaction. Kept whatever their age:
    events not dispatched yet (still to be delivered) and events with deliveries (the deliveries'
    history refers to them). Events have no index on their time (each would cost every task run an
    index entry); ids grow with time, so the walk follows the primary key and stops at the first
    event inside the retention window. Returns how many were deleted."""
    days = settings.EVENT_RETENTION_DAYS
    if days <= 0:
        return 0
    cutoff = now_ms() - timedelta(days=days)
    deleted, after = 0, 0
    for _ in range(max_batches):
        batch = list(
            Event.objects.filter(id__gt=after).order_by("id").values_list("id", "occurred_at")[:batch_size]
        )
        old = [pk for pk, occurred_at in batch if occurred_at < cutoff]
        if old:
            with transaction.atomic():
                gone = Event.objects.filter(pk__in=old, dispatched_at__isnull=False, deliveries__isnull=True)
                deleted += gone.delete()[1].get(Event._meta.label, 0)
        if len(old) < batch_size:  # reached the window (or the end)
            break
        after = batch[-1][0]
    return deleted


def deliveries_sweep() -> int:
    """Re-queues deliveries whose task was lost (broker restart) or whose worker died mid-attempt."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.WEBHOOK_SWEEP_GRACE_SECONDS)
    Delivery.objects.filter(status=Delivery.DELIVERING, claimed_until__lt=now).update(
        status=Delivery.PENDING, claimed_until=None
    )
    ids = [
        str(i)
        for i in Delivery.objects.filter(status=Delivery.PENDING, next_attempt_at__lt=stale).values_list(
            "id", flat=True
        )[:500]
    ]
    queue.enqueue_deliveries(ids)
    return len(ids)
