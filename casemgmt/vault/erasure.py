"""Erasure jobs: a principal's personal data scrubbed from cases, tasks, documents and audit
payloads (scope `full`), or only its documents (scope `documents`).

A job runs its steps in order. Each step runs in one transaction that first locks the job's row and
checks that this attempt still holds the job, and that commits the step's changes together with its
name in `steps_done` and its counts. A worker killed mid-step therefore leaves that step undone (its
transaction rolls back), and the next attempt resumes at it; every step is also safe to redo. Jobs
whose worker vanished are found by their heartbeat going stale and claimed again by the periodic
scan, which every worker also runs when it starts. What counts as personal data, and why, is in
docs/erasure.md.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q, TextField
from django.db.models.functions import Cast

from casemgmt.accounts.models import User
from casemgmt.accounts.services import principal_disable
from casemgmt.audit.models import AuditEvent
from casemgmt.audit.services import record
from casemgmt.cases.jsondata import search_text
from casemgmt.cases.models import Case
from casemgmt.vault.blobs import blob_release
from casemgmt.vault.models import Document, Erasure
from casemgmt.vault.scrub import Needles, scrub_value
from casemgmt.workflows.models import CaseStep
from shared.api.time import iso, now_ms
from shared.audit.hashing import canonical_json
from shared.audit.services import audit_erase

logger = logging.getLogger(__name__)


class Superseded(Exception):
    """Another attempt holds the job (this one was presumed dead), or the job already ended."""


# --- claiming ----------------------------------------------------------------------------------


def _stale_before() -> Any:
    return now_ms() - timedelta(seconds=settings.ERASURE_LEASE_SECONDS)


def _claimable() -> Q:
    return Q(status=Erasure.PENDING) | Q(status=Erasure.RUNNING, heartbeat_at__lt=_stale_before())


def erasure_claim(*, erasure_id: UUID | str) -> int | None:
    """Takes the job with a conditional UPDATE (pending, or running with a stale heartbeat) and
    returns this attempt's number; None when another live attempt holds it or it has ended."""
    jobs = Erasure.objects.filter(_claimable(), id=erasure_id)
    given_up = jobs.filter(attempt__gte=settings.ERASURE_MAX_ATTEMPTS)
    if given_up.update(
        status=Erasure.FAILED, error=f"gave up after {settings.ERASURE_MAX_ATTEMPTS} attempts"
    ):
        return None
    with transaction.atomic():
        if not jobs.update(status=Erasure.RUNNING, attempt=F("attempt") + 1, heartbeat_at=now_ms()):
            return None
        return Erasure.objects.values_list("attempt", flat=True).get(id=erasure_id)


def erasures_resumable() -> list[UUID]:
    """Jobs whose worker vanished (stale heartbeat) or whose message was lost (pending too long)."""
    pending_too_long = Q(status=Erasure.PENDING, requested_at__lt=_stale_before())
    stalled = Q(status=Erasure.RUNNING, heartbeat_at__lt=_stale_before())
    return list(Erasure.objects.filter(pending_too_long | stalled).values_list("id", flat=True))


def erasure_run(*, erasure_id: UUID | str) -> None:
    attempt = erasure_claim(erasure_id=erasure_id)
    if attempt is None:
        return
    scope = Erasure.objects.values_list("scope", flat=True).get(id=erasure_id)
    try:
        for name in STEPS[scope]:
            _run_step(erasure_id, attempt, name)
        _run_step(erasure_id, attempt, "complete")
    except Superseded:
        logger.info("erasure %s: attempt %s superseded", erasure_id, attempt)


def _run_step(erasure_id: UUID | str, attempt: int, name: str) -> None:
    with transaction.atomic():
        erasure = Erasure.objects.select_for_update().select_related("subject").get(id=erasure_id)
        if erasure.attempt != attempt or erasure.status != Erasure.RUNNING:
            raise Superseded()
        if name in erasure.steps_done:
            return
        STEP_FUNCTIONS[name](erasure)
        erasure.steps_done = [*erasure.steps_done, name]
        erasure.heartbeat_at = now_ms()
        erasure.save()


# --- steps -------------------------------------------------------------------------------------


def _count(erasure: Erasure, key: str, amount: int) -> None:
    erasure.counts = {**erasure.counts, key: erasure.counts.get(key, 0) + amount}


def _touch(erasure: Erasure, case_ids: list[Any]) -> None:
    erasure.cases_touched = sorted({*erasure.cases_touched, *(str(c) for c in case_ids if c)})


def needles_of(user: User) -> Needles:
    return Needles.of(email=user.email, display_name=user.display_name)


def _text_match(field: str, needles: Needles) -> Q:
    query = Q(pk__in=[])
    for text in needles.texts:
        query |= Q(**{f"{field}__icontains": text})
    return query


def step_disable(erasure: Erasure) -> None:
    """Drafts on the subject's tasks go first, in this transaction, because disabling hands the
    open tasks back to the pool and they would no longer be recognisable as the subject's."""
    subject = erasure.subject
    drafts = CaseStep.objects.filter(tenant_id=erasure.tenant_id, assigned_to=subject, draft__isnull=False)
    _touch(erasure, list(drafts.values_list("case_id", flat=True)))
    _count(erasure, "draftsRemoved", drafts.update(draft=None, draft_saved_at=None))
    if subject.is_active:
        principal_disable(user=subject, actor=erasure.requested_by)
        _count(erasure, "principalsDisabled", 1)


def step_cases(erasure: Erasure) -> None:
    subject, needles = erasure.subject, needles_of(erasure.subject)
    cases = (
        Case.objects.select_for_update(no_key=True)
        .annotate(data_text=Cast("data", TextField()))
        .filter(tenant_id=erasure.tenant_id)
        .filter(
            Q(created_by=subject)
            | _text_match("data_text", needles)
            | _text_match("display_name", needles)
            | _text_match("status_reason", needles)
        )
    )
    for case in cases:
        _scrub_case(erasure, case, needles)


def _scrub_case(erasure: Erasure, case: Case, needles: Needles) -> None:
    data, paths = scrub_value(case.data, needles)
    display_name, reason = needles.replace(case.display_name), needles.replace(case.status_reason)
    changed = bool(paths) or display_name != case.display_name or reason != case.status_reason
    if changed:
        case.data, case.display_name, case.status_reason = data, display_name, reason
        case.version += 1
        case.search_text = search_text(case_number=case.case_number, display_name=display_name, data=data)
    if case.created_by_id == erasure.subject.id:
        case.created_by = None
    case.save()
    _touch(erasure, [case.id])
    _count(erasure, "casesScrubbed", 1)
    if changed:
        record(
            tenant_id=case.tenant_id,
            actor=str(erasure.requested_by_id),
            action="case:updated",
            resource=f"cases/{case.id}",
            changes={
                "erasureId": str(erasure.id),
                "erasedFields": sorted(set(paths))[:100],
                "version": case.version,
            },
        )


def step_tasks(erasure: Erasure) -> None:
    subject, needles = erasure.subject, needles_of(erasure.subject)
    steps = (
        CaseStep.objects.select_for_update(no_key=True)
        .annotate(draft_text=Cast("draft", TextField()), result_text=Cast("result", TextField()))
        .filter(tenant_id=erasure.tenant_id)
        .filter(
            Q(assigned_to=subject)
            | Q(completed_by=subject)
            | Q(escalated_to=subject)
            | _text_match("draft_text", needles)
            | _text_match("result_text", needles)
            | _text_match("escalation_reason", needles)
        )
    )
    for step in steps:
        _scrub_step(erasure, step, needles)


def _scrub_step(erasure: Erasure, step: CaseStep, needles: Needles) -> None:
    subject_id = erasure.subject.id
    cleared = 0
    for field in ("assigned_to", "completed_by", "escalated_to"):
        if getattr(step, f"{field}_id") == subject_id:
            setattr(step, field, None)
            cleared += 1
    if step.assigned_to_id is None:
        step.claimed_at = None
    step.draft = scrub_value(step.draft, needles)[0]
    step.result = scrub_value(step.result, needles)[0]
    step.escalation_reason = needles.replace(step.escalation_reason)
    step.save()
    _touch(erasure, [step.case_id])
    _count(erasure, "assignmentsCleared", cleared)
    _count(erasure, "tasksScrubbed", 1)


def _events_before_request(erasure: Erasure) -> Any:
    return AuditEvent.objects.filter(
        tenant_id=erasure.tenant_id, erased=False, sequence__lte=erasure.request_sequence
    ).exclude(action__startswith="erasure:")


def _subject_documents(erasure: Erasure) -> Any:
    return Document.objects.filter(tenant_id=erasure.tenant_id, uploaded_by=erasure.subject)


def step_audit(erasure: Erasure) -> None:
    """Events the subject recorded, events about the subject's principal and documents (their
    payloads carry its email, name and file names), and any other event whose payload names it."""
    subject, needles = erasure.subject, needles_of(erasure.subject)
    resources = [d.audit_resource for d in _subject_documents(erasure)]
    events = AuditEvent.objects.filter(tenant_id=erasure.tenant_id, erased=False).exclude(
        action__startswith="erasure:"
    )
    mentioned = events.annotate(changes_text=Cast("changes", TextField())).filter(
        _text_match("changes_text", needles)
    )
    about = _events_before_request(erasure).filter(
        Q(actor=str(subject.id)) | Q(resource=f"principals/{subject.id}") | Q(resource__in=resources)
    )
    ids = {*mentioned.values_list("id", flat=True), *about.values_list("id", flat=True)}
    _count(erasure, "auditEventsErased", audit_erase(model=AuditEvent, event_ids=ids, scrub={"changes": {}}))


def step_documents_audit(erasure: Erasure) -> None:
    """Documents-only erasure: the events of those documents (their payloads carry file names)."""
    resources = [d.audit_resource for d in _subject_documents(erasure)]
    ids = list(_events_before_request(erasure).filter(resource__in=resources).values_list("id", flat=True))
    _count(erasure, "auditEventsErased", audit_erase(model=AuditEvent, event_ids=ids, scrub={"changes": {}}))


def step_documents(erasure: Erasure) -> None:
    documents = list(_subject_documents(erasure).select_for_update())
    for document in documents:
        record(
            tenant_id=document.tenant_id,
            actor=str(erasure.requested_by_id),
            action="document:deleted",
            resource=document.audit_resource,
            changes={"erasureId": str(erasure.id)},
        )
        document.delete()
    erasure.blobs = sorted({*erasure.blobs, *(d.blob_id for d in documents)})
    _touch(erasure, [d.case_id for d in documents])
    _count(erasure, "documentsDeleted", len(documents))


def step_blobs(erasure: Erasure) -> None:
    """Bytes no other document refers to are removed; ones shared with other documents stay."""
    _count(erasure, "blobsRemoved", sum(blob_release(sha256=sha) for sha in erasure.blobs))


def step_principal(erasure: Erasure) -> None:
    """Last, because the steps before find the subject's data by its email and name."""
    subject = erasure.subject
    subject.email = f"erased-{subject.id}@erased.invalid"
    subject.display_name = ""
    subject.preferences = {}
    subject.api_key_hash = None
    subject.api_key_prefix = ""
    subject.token_generation += 1
    subject.set_unusable_password()
    subject.save()
    subject.roles.clear()
    _count(erasure, "principalsAnonymised", 1)


def step_complete(erasure: Erasure) -> None:
    completed_at = now_ms()
    report: dict[str, Any] = {
        "erasureId": str(erasure.id),
        "userId": str(erasure.subject_id),
        "scope": erasure.scope,
        "reason": erasure.reason,
        "requestedAt": iso(erasure.requested_at),
        "completedAt": iso(completed_at),
        "casesTouched": erasure.cases_touched,
        "counts": {key: erasure.counts.get(key, 0) for key in COUNTS[erasure.scope]},
    }
    report["verificationHash"] = report_hash(report)
    record(
        tenant_id=erasure.tenant_id,
        actor=str(erasure.requested_by_id),
        action="erasure:completed",
        resource=f"erasures/{erasure.id}",
        changes=report,
    )
    erasure.report, erasure.completed_at, erasure.status = report, completed_at, Erasure.COMPLETED


def report_hash(report: dict[str, Any]) -> str:
    """sha256 over the canonical JSON (sorted keys, no whitespace, UTF-8) of the report without
    its own `verificationHash`: anyone holding the report can recompute it."""
    body = {k: v for k, v in report.items() if k != "verificationHash"}
    return "sha256:" + hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


STEPS: dict[str, tuple[str, ...]] = {
    Erasure.FULL: ("disable", "tasks", "cases", "audit", "documents", "blobs", "principal"),
    Erasure.DOCUMENTS: ("documents_audit", "documents", "blobs"),
}
# Every count of its scope appears in a report, zero when nothing was found.
COUNTS: dict[str, tuple[str, ...]] = {
    Erasure.FULL: (
        "principalsDisabled", "draftsRemoved", "tasksScrubbed", "assignmentsCleared", "casesScrubbed",
        "auditEventsErased", "documentsDeleted", "blobsRemoved", "principalsAnonymised",
    ),
    Erasure.DOCUMENTS: ("auditEventsErased", "documentsDeleted", "blobsRemoved"),
}  # fmt: skip
STEP_FUNCTIONS: dict[str, Callable[[Erasure], None]] = {
    "disable": step_disable,
    "tasks": step_tasks,
    "cases": step_cases,
    "audit": step_audit,
    "documents_audit": step_documents_audit,
    "documents": step_documents,
    "blobs": step_blobs,
    "principal": step_principal,
    "complete": step_complete,
}
