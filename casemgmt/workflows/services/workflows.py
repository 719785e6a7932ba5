"""Workflow definitions: drafts are edited, published versions are frozen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, transaction
from django.db.models import Max

from casemgmt.audit.services import record
from casemgmt.cases.models import CaseType
from casemgmt.workflows.definitions import publish_errors, steps_of
from casemgmt.workflows.models import Workflow
from shared.api.errors import Conflict, InvalidState, ValidationFailed
from shared.api.time import now_ms

if TYPE_CHECKING:
    from casemgmt.accounts.models import User


def _definition(steps: list[Any], outcomes: list[str] | None) -> dict[str, Any]:
    definition: dict[str, Any] = {"steps": steps}
    if outcomes is not None:
        definition["outcomes"] = outcomes
    return definition


def _audit(user: User, workflow: Workflow, action: str, changes: dict[str, Any]) -> None:
    record(
        tenant_id=workflow.tenant_id,
        actor=str(user.id),
        action=action,
        resource=f"workflows/{workflow.id}",
        changes={"caseTypeKey": workflow.case_type_key, "version": workflow.version, **changes},
    )


def workflow_create(
    *,
    user: User,
    case_type_key: str,
    name: str,
    steps: list[Any],
    auto_close: bool = False,
    sla_hours: int | None = None,
    outcomes: list[str] | None = None,
) -> Workflow:
    if not CaseType.objects.filter(tenant_id=user.member_tenant_id, key=case_type_key).exists():
        raise ValidationFailed(f"no case type with key {case_type_key!r}", field="caseTypeKey")
    for _ in range(5):  # versions are numbered per case type; a concurrent creator may take ours
        try:
            return _create(user, case_type_key, name, _definition(steps, outcomes), auto_close, sla_hours)
        except IntegrityError:
            continue
    raise Conflict("Could not allocate a workflow version; retry.", code="version_conflict")


@transaction.atomic
def _create(
    user: User, key: str, name: str, definition: dict[str, Any], auto_close: bool, sla_hours: int | None
) -> Workflow:
    latest = Workflow.objects.filter(tenant_id=user.member_tenant_id, case_type_key=key).aggregate(
        v=Max("version")
    )["v"]
    workflow = Workflow.objects.create(
        tenant_id=user.member_tenant_id,
        case_type_key=key,
        name=name,
        version=(latest or 0) + 1,
        definition=definition,
        auto_close=auto_close,
        sla_hours=sla_hours,
        created_by=user,
    )
    _audit(user, workflow, "workflow:created", {"name": name})
    return workflow


def _locked(workflow: Workflow) -> Workflow:
    return Workflow.objects.select_for_update(no_key=True).get(pk=workflow.pk)


@transaction.atomic
def workflow_update(
    *,
    user: User,
    workflow: Workflow,
    name: str,
    steps: list[Any],
    auto_close: bool = False,
    sla_hours: int | None = None,
    outcomes: list[str] | None = None,
) -> Workflow:
    workflow = _locked(workflow)
    if workflow.status != Workflow.DRAFT:  # PUT on drafts only
        raise InvalidState(f"Workflow is {workflow.status}; only drafts can be edited.")
    workflow.name, workflow.auto_close, workflow.sla_hours = name, auto_close, sla_hours
    workflow.definition = _definition(steps, outcomes)
    workflow.save(update_fields=["name", "definition", "auto_close", "sla_hours", "updated_at"])
    _audit(user, workflow, "workflow:edited", {"name": name, "steps": len(steps)})
    return workflow


@transaction.atomic
def workflow_publish(*, user: User, workflow: Workflow) -> Workflow:
    # Lock every version of this case type key, in one order: of two concurrent publishes, the
    # second waits and then unsets the first's default (one default, never a deadlock).
    versions = Workflow.objects.filter(tenant_id=workflow.tenant_id, case_type_key=workflow.case_type_key)
    list(versions.select_for_update(no_key=True).order_by("pk").values_list("pk", flat=True))
    workflow = _locked(workflow)
    if workflow.status != Workflow.DRAFT:
        raise InvalidState(f"Workflow is {workflow.status}; only drafts can be published.")
    errors = publish_errors(workflow.definition, tenant_id=workflow.tenant_id)
    if errors:
        raise ValidationFailed.from_errors(errors)
    # Frozen as posted, with the defaults made explicit so later code never guesses.
    workflow.definition = {**workflow.definition, "steps": steps_of(workflow.definition)}
    Workflow.objects.filter(
        tenant_id=workflow.tenant_id, case_type_key=workflow.case_type_key, is_default=True
    ).update(is_default=False)
    workflow.status, workflow.is_default, workflow.published_at = Workflow.PUBLISHED, True, now_ms()
    workflow.save(update_fields=["definition", "status", "is_default", "published_at", "updated_at"])
    _audit(
        user,
        workflow,
        "workflow:published",
        {"status": {"before": Workflow.DRAFT, "after": Workflow.PUBLISHED}},
    )
    return workflow


@transaction.atomic
def workflow_withdraw(*, user: User, workflow: Workflow) -> Workflow:
    workflow = _locked(workflow)
    if workflow.status != Workflow.PUBLISHED:
        raise InvalidState(f"Workflow is {workflow.status}; only published workflows can be withdrawn.")
    workflow.status, workflow.is_default = Workflow.WITHDRAWN, False
    workflow.save(update_fields=["status", "is_default", "updated_at"])
    _audit(
        user,
        workflow,
        "workflow:withdrawn",
        {"status": {"before": Workflow.PUBLISHED, "after": Workflow.WITHDRAWN}},
    )
    return workflow
