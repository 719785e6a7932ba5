"""Reads of the tenant audit trail: filtered listings and the events that concern one case."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from uuid import UUID

from django.db.models import Q, QuerySet

from casemgmt.audit.models import AuditCheckpoint, AuditEvent

EXPORT_FORMATS = ("csv", "json")


def case_event_filter(case_id: Any) -> Q:
    """Decision: an event concerns case X when its resource is `cases/X`, lies under `cases/X/...`
    (steps, documents) or under `tasks/X/...` (the case's human tasks)."""
    resource = f"cases/{case_id}"
    return (
        Q(resource=resource)
        | Q(resource__startswith=f"{resource}/")
        | Q(resource__startswith=f"tasks/{case_id}/")
    )


def case_events(*, tenant_id: Any, case_id: Any) -> QuerySet[AuditEvent]:
    """Chain order (oldest first), as verification and exports read them."""
    return AuditEvent.objects.filter(case_event_filter(case_id), tenant_id=tenant_id).order_by("sequence")


def case_event_list(*, tenant_id: Any, case_id: Any) -> QuerySet[AuditEvent]:
    """GET /cases/{id}/events: newest first (the chain's sequence is unique, so no tie-breaker)."""
    return case_events(tenant_id=tenant_id, case_id=case_id).order_by("-sequence")


def time_bounds(start: date | datetime | None, end: date | datetime | None) -> tuple[Any, Any, bool]:
    """(low, high, whether high is exclusive): a date as a start is its midnight (UTC); as an end
    it covers that whole day (the next midnight, exclusive)."""
    low = datetime.combine(start, time.min, UTC) if type(start) is date else start
    if type(end) is not date:
        return low, end, False
    if end == date.max:  # no next midnight: the last instant there is, inclusive
        return low, datetime.max.replace(tzinfo=UTC), False
    return low, datetime.combine(end, time.min, UTC) + timedelta(days=1), True


def events_in_range(
    events: QuerySet[AuditEvent], *, start: date | datetime | None = None, end: date | datetime | None = None
) -> QuerySet[AuditEvent]:
    low, high, exclusive = time_bounds(start, end)
    if low:
        events = events.filter(timestamp__gte=low)
    if high:
        events = events.filter(timestamp__lt=high) if exclusive else events.filter(timestamp__lte=high)
    return events


def audit_list(
    *,
    tenant_id: Any,
    start: date | datetime | None = None,
    end: date | datetime | None = None,
    actor: str | None = None,
    action: str | None = None,
    resource: str | None = None,
) -> QuerySet[AuditEvent]:
    """GET /audit: between `start` and `end`, `actor`, `action` (exact), `resource` (exact, or a
    prefix ending in `*`)."""
    events = events_in_range(AuditEvent.objects.filter(chain=str(tenant_id)), start=start, end=end)
    if actor:
        events = events.filter(actor=actor)
    if action:
        events = events.filter(action=action)
    if resource:
        events = (
            events.filter(resource__startswith=resource[:-1])
            if resource.endswith("*")
            else events.filter(resource=resource)
        )
    return events.order_by("-sequence")


def checkpoint_list(*, tenant_id: Any) -> QuerySet[AuditCheckpoint]:
    """GET /audit/checkpoints: the tenant chain's checkpoints, newest first."""
    return AuditCheckpoint.objects.filter(chain=str(tenant_id)).order_by("-sequence")


def activity(*, tenant_id: UUID, limit: int) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(tenant_id=tenant_id).order_by("-sequence")[:limit])
