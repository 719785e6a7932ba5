from __future__ import annotations

from django.db.models import QuerySet

from orchestrator.audit.models import CHAIN, AuditCheckpoint, AuditEvent

EXPORT_FORMATS = ("csv", "json")
FILTERS = ("action", "actor", "resource")


def audit_event_list(
    *, action: str | None = None, actor: str | None = None, resource: str | None = None
) -> QuerySet[AuditEvent]:
    """Newest first; each filter given is an exact match."""
    events = AuditEvent.objects.filter(chain=CHAIN)
    for key, value in (("action", action), ("actor", actor), ("resource", resource)):
        if value:
            events = events.filter(**{key: value})
    return events.order_by("-sequence")


def audit_export_events() -> QuerySet[AuditEvent]:
    """Oldest first, so an export can be verified by walking it in order."""
    return AuditEvent.objects.filter(chain=CHAIN).order_by("sequence")


def audit_checkpoint_list() -> QuerySet[AuditCheckpoint]:
    """Newest first."""
    return AuditCheckpoint.objects.filter(chain=CHAIN).order_by("-sequence")
