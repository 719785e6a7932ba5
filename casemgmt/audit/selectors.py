"""Reads of the tenant audit trail: filtered listings and the events that concern one case."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any
from uuid import UUID

from django.db.models import Q, QuerySet
from django.http import QueryDict

from casemgmt.audit.models import AuditCheckpoint, AuditEvent
from shared.api.errors import ValidationFailed
from shared.api.time import parse_iso

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


def _date_bound(raw: str | None, field: str, *, end: bool) -> tuple[datetime | None, bool]:
    """A bare date as an end bound covers that whole day (returns the next midnight, exclusive)."""
    value = parse_iso(raw, field)
    if value is not None and end and raw is not None and len(raw) == 10:
        if value.date() == date.max:  # no next midnight: the last instant there is, inclusive
            return datetime.max.replace(tzinfo=UTC), False
        return value + timedelta(days=1), True
    return value, False


def events_in_range(
    events: QuerySet[AuditEvent], params: QueryDict, start: str, end: str
) -> QuerySet[AuditEvent]:
    low, _ = _date_bound(params.get(start), start, end=False)
    high, exclusive = _date_bound(params.get(end), end, end=True)
    if low and high and low > high:
        raise ValidationFailed(f"{start} must not be after {end}", field=start)
    if low:
        events = events.filter(timestamp__gte=low)
    if high:
        events = events.filter(timestamp__lt=high) if exclusive else events.filter(timestamp__lte=high)
    return events


def audit_list(*, tenant_id: Any, params: QueryDict) -> QuerySet[AuditEvent]:
    """GET /audit: `from`, `to`, `actor`, `action` (exact), `resource` (exact, or a prefix ending in `*`)."""
    events = events_in_range(AuditEvent.objects.filter(chain=str(tenant_id)), params, "from", "to")
    if params.get("actor"):
        events = events.filter(actor=params["actor"])
    if params.get("action"):
        events = events.filter(action=params["action"])
    resource = params.get("resource")
    if resource:
        events = (
            events.filter(resource__startswith=resource[:-1])
            if resource.endswith("*")
            else events.filter(resource=resource)
        )
    return events.order_by("-sequence")


def export_format(params: QueryDict) -> str:
    value = params.get("format", "json")  # absent: json; empty or anything else: 400
    if value not in EXPORT_FORMATS:
        raise ValidationFailed("format must be csv or json", field="format")
    return value


def checkpoint_list(*, tenant_id: Any) -> QuerySet[AuditCheckpoint]:
    """GET /audit/checkpoints: the tenant chain's checkpoints, newest first."""
    return AuditCheckpoint.objects.filter(chain=str(tenant_id)).order_by("-sequence")


def activity(*, tenant_id: UUID, limit: int) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(tenant_id=tenant_id).order_by("-sequence")[:limit])
