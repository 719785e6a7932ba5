"""Reads of per-case workflow state used by the cases app (case detail, list items)."""

from __future__ import annotations

from typing import Any

from casemgmt.workflows.models import CaseStep
from shared.api.time import iso


def step_detail(step: CaseStep) -> dict[str, Any]:
    detail: dict[str, Any] = {
        "id": step.step_id,
        "name": step.name,
        "type": step.type,
        "status": step.status,
        "activatedAt": iso(step.activated_at),
    }
    if step.completed_at is not None:  # spec: completedAt absent while active
        detail["completedAt"] = iso(step.completed_at)
    return detail


def case_workflow_detail(case: Any) -> dict[str, Any] | None:
    """The `workflow` object of GET /cases/{id}: {id, version, steps[]}, or None without a workflow."""
    if case.workflow_version_id is None:
        return None
    steps = CaseStep.objects.filter(case=case).order_by("position")
    return {
        "id": str(case.workflow_version_id),
        "version": case.workflow_version.version,
        "steps": [step_detail(step) for step in steps],
    }


def case_current_step(case: Any) -> str | None:
    """Name of the first active step (list item `currentStep`), or None."""
    step = CaseStep.objects.filter(case=case, status=CaseStep.ACTIVE).order_by("position").first()
    return step.name if step else None


def step_results(case: Any) -> dict[str, Any]:
    """`step_results` for templates and conditions: outputs keyed by step id."""
    rows = CaseStep.objects.filter(case=case, status=CaseStep.COMPLETED).values_list("step_id", "result")
    return {step_id: result for step_id, result in rows}
