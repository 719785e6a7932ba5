"""Moving live cases from one published version of a workflow to another (`POST /workflows/{id}/migrate`).

Each case moves in its own transaction, under its row lock: it moves whole or not at all, and one
case that cannot move (an active step the mapping leaves without a counterpart) is reported while
the others go on. Completed steps keep their results under their new ids; a step of the old version
with no counterpart is kept in the case's step history (`StepRun`); steps only the new version has
are added `pending`, and the engine enters those whose dependencies are done.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, transaction
from django.db.models import CharField, Value
from django.db.models.functions import Cast, Concat

from casemgmt.audit.services import record
from casemgmt.cases.models import Case
from casemgmt.workflows.definitions import steps_of
from casemgmt.workflows.engine import archived_run, workflow_advance
from casemgmt.workflows.models import CaseStep, StepRun, Workflow
from shared.api.errors import ApplicationError, Conflict, InvalidState, ValidationFailed
from shared.api.time import now_ms

if TYPE_CHECKING:
    from casemgmt.accounts.models import User

MAX_CASES = 10_000


@dataclass
class MigrationResult:
    migrated: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)


def workflow_migrate(
    *,
    user: User,
    workflow: Workflow,
    from_version: int,
    step_mapping: dict[str, str],
    case_ids: list[Any] | None = None,
) -> MigrationResult:
    if workflow.status != Workflow.PUBLISHED:
        raise InvalidState(f"Workflow is {workflow.status}; cases move only to a published version.")
    source = Workflow.objects.filter(
        tenant_id=workflow.tenant_id, case_type_key=workflow.case_type_key, version=from_version
    ).first()
    if source is None or source.pk == workflow.pk:
        raise ValidationFailed(
            f"fromVersion must be another version of {workflow.case_type_key}", field="fromVersion"
        )
    targets = {step["id"]: (position, step) for position, step in enumerate(steps_of(workflow.definition))}
    for old, new in step_mapping.items():
        if new not in targets:
            raise ValidationFailed(
                f"{new!r} is not a step of version {workflow.version}", field=f"stepMapping.{old}"
            )
    cases = Case.objects.filter(tenant_id=workflow.tenant_id, workflow_version=source, status=Case.ACTIVE)
    result = MigrationResult()
    if case_ids is not None:
        wanted = {str(case_id) for case_id in case_ids}
        found = {str(pk) for pk in cases.filter(id__in=wanted).values_list("pk", flat=True)}
        result.failed += [
            {"caseId": case_id, "code": "not_found", "message": f"no active case on version {from_version}"}
            for case_id in sorted(wanted - found)
        ]
        cases = cases.filter(id__in=found)
    for case_id in cases.order_by("created_at", "id").values_list("pk", flat=True)[:MAX_CASES]:
        try:
            with transaction.atomic():
                _migrate_case(user, case_id, source, workflow, targets, step_mapping)
        except ApplicationError as exc:
            result.failed.append({"caseId": str(case_id), "code": exc.code, "message": exc.message})
        except IntegrityError:
            result.failed.append(
                {"caseId": str(case_id), "code": "conflict", "message": "two steps map to one new step"}
            )
        else:
            result.migrated += 1
    return result


def _migrate_case(
    user: User,
    case_id: Any,
    source: Workflow,
    workflow: Workflow,
    targets: dict[str, tuple[int, dict[str, Any]]],
    mapping: dict[str, str],
) -> None:
    case = Case.objects.select_for_update(of=("self",), no_key=True).get(pk=case_id)
    if case.status != Case.ACTIVE or case.workflow_version_id != source.pk:
        raise InvalidState("the case is no longer active on the version it was listed on")
    rows = list(CaseStep.objects.filter(case=case).order_by("position"))
    before = {row.pk: (row.step_id, row.position, row.name, row.type) for row in rows}
    moved, dropped = _plan(rows, targets, mapping)
    archived_ids = [row.step_id for row in dropped]
    started = [row for row in dropped if row.status != CaseStep.PENDING]
    if started:
        StepRun.objects.bulk_create([archived_run(row, now_ms()) for row in started])
    kept = {row.step_id for row in moved}
    missing = [
        (step_id, position, step) for step_id, (position, step) in targets.items() if step_id not in kept
    ]
    # A pending step the new version lacks becomes one of its new steps (one UPDATE instead of a
    # DELETE and an INSERT); what is left over is deleted or inserted.
    spare = [row for row in dropped if row.status == CaseStep.PENDING]
    reused = [_become(row, *new) for row, new in zip(spare, missing, strict=False)]
    gone = [row.pk for row in dropped if row not in reused]
    if gone:
        CaseStep.objects.filter(pk__in=gone).delete()
    changed = [
        row for row in moved + reused if before[row.pk] != (row.step_id, row.position, row.name, row.type)
    ]
    if changed:
        # Two statements, so that a swap of ids (a -> b, b -> a) never meets the unique (case, step id).
        CaseStep.objects.filter(pk__in=[row.pk for row in changed]).update(
            step_id=Concat(Value("~"), Cast("id", CharField()))
        )
        CaseStep.objects.bulk_update(changed, ["step_id", "name", "position", "type", "is_task", "role"])
    added = [_new_step(case, *new) for new in missing[len(reused) :]]
    if added:
        CaseStep.objects.bulk_create(added)
    case.workflow_version = workflow
    case.save(update_fields=["workflow_version", "updated_at"])
    record(
        tenant_id=case.tenant_id,
        actor=str(user.id),
        action="case:migrated",
        resource=f"cases/{case.id}",
        changes={
            "workflowVersionId": {"before": str(source.pk), "after": str(workflow.pk)},
            "version": {"before": source.version, "after": workflow.version},
            "steps": {row.step_id: row.status for row in moved},
            "archivedSteps": archived_ids,
        },
    )
    workflow_advance(case=case, actor=user)


def _become(row: CaseStep, step_id: str, position: int, step: dict[str, Any]) -> CaseStep:
    row.step_id, row.position, row.name, row.type = (
        step_id,
        position,
        step.get("name") or step_id,
        step["type"],
    )
    row.is_task, row.role = step["type"] == "task", step.get("role") or ""
    return row


def _new_step(case: Case, step_id: str, position: int, step: dict[str, Any]) -> CaseStep:
    return _become(CaseStep(tenant_id=case.tenant_id, case=case), step_id, position, step)


def _plan(
    rows: list[CaseStep], targets: dict[str, tuple[int, dict[str, Any]]], mapping: dict[str, str]
) -> tuple[list[CaseStep], list[CaseStep]]:
    """The rows that move (renamed and repositioned in memory) and the rows kept only in history.
    An active step without a counterpart of its type refuses the whole case."""
    moved: list[CaseStep] = []
    dropped: list[CaseStep] = []
    for row in rows:
        new_id = mapping.get(row.step_id, row.step_id)
        target = targets.get(new_id)
        if target is None or target[1]["type"] != row.type:
            if row.status == CaseStep.ACTIVE:
                problem = (
                    "is not mapped to a step" if target is None else f"maps to a {target[1]['type']} step"
                )
                raise Conflict(
                    f"active step {row.step_id!r} {problem} of the new version", code="unmapped_step"
                )
            dropped.append(row)
            continue
        row.step_id, row.position = new_id, target[0]
        row.name = target[1].get("name") or new_id
        moved.append(row)
    if len({row.step_id for row in moved}) != len(moved):
        raise Conflict("two steps of the case map to one step of the new version", code="unmapped_step")
    return moved, dropped
