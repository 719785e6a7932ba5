from __future__ import annotations

from django.db.models import QuerySet
from django.http import QueryDict

from orchestrator.audit.models import CHAIN, AuditCheckpoint, AuditEvent
from shared.api.errors import ValidationFailed

EXPORT_FORMATS = ("csv", "json")
FILTERS = ("action", "actor", "resource")


def audit_event_list(*, filters: dict[str, str]) -> QuerySet[AuditEvent]:
    """Newest first; each filter is an exact match."""
    events = AuditEvent.objects.filter(chain=CHAIN)
    for key in FILTERS:
        if filters.get(key):
            events = events.filter(**{key: filters[key]})
    return events.order_by("-sequence")


def audit_export_events() -> QuerySet[AuditEvent]:
    """Oldest first, so an export can be verified by walking it in order."""
    return AuditEvent.objects.filter(chain=CHAIN).order_by("sequence")


def audit_checkpoint_list() -> QuerySet[AuditCheckpoint]:
    """Newest first."""
    return AuditCheckpoint.objects.filter(chain=CHAIN).order_by("-sequence")


def export_format(params: QueryDict) -> str:
    value = params.get("format", "json")  # absent: json; empty or anything else: 400
    if value not in EXPORT_FORMATS:
        raise ValidationFailed("format must be csv or json", field="format")
    return value
