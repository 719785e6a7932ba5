"""Workflow definitions: normalizing a posted definition and the checks publishing runs."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from jsonschema import Draft7Validator
from jsonschema.exceptions import SchemaError

from casemgmt.templating import TemplateError, check_template
from casemgmt.templating.renderer import condition_source
from casemgmt.workflows import steps as step_types

if TYPE_CHECKING:
    from casemgmt.cases.models import Case

STEP_ID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,99}$")
# slaHours bound (workflow and step): 10 years. Larger values overflow the integer column or
# datetime arithmetic (timedelta) when a case or task is created, which would be a 500 later.
SLA_HOURS_MAX = 87600
# Per-step fields whose JSON type is fixed whatever the step type; the type-specific checks
# (publish) rely on these so that e.g. an unhashable `type` never reaches the registry lookup.
_STRING_FIELDS = (
    "id", "name", "type", "condition", "role", "outputKey", "responseFormat", "onFailure", "team", "assignment",
    "after", "until", "message", "caseTypeKey",
)  # fmt: skip
_OBJECT_FIELDS = ("formSchema", "routes")


def sla_hours_error(value: Any) -> str | None:
    """None when `value` is a whole number of hours in 1..SLA_HOURS_MAX, else the problem."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= SLA_HOURS_MAX:
        return f"must be an integer from 1 to {SLA_HOURS_MAX}"
    return None


def step_shape_errors(raw: Any) -> list[dict[str, str]]:
    """JSON-type problems of posted steps, checked on every save (drafts too) so that a stored
    definition can always be validated and run without type errors; presence and references
    are publish-time checks."""
    if not isinstance(raw, list):
        return [{"field": "steps", "error": "must be a list of step objects"}]
    errors: list[dict[str, str]] = []
    for index, step in enumerate(raw):
        at = f"steps[{index}]"
        if not isinstance(step, dict):
            errors.append({"field": at, "error": "must be an object"})
            continue
        errors.extend(_one_step_shape_errors(step, at))
    return errors


def _one_step_shape_errors(step: dict[str, Any], at: str) -> list[dict[str, str]]:
    errors: list[dict[str, str]] = []
    for key in _STRING_FIELDS:
        if step.get(key) is not None and not isinstance(step[key], str):
            errors.append({"field": f"{at}.{key}", "error": "must be a string"})
    for key in _OBJECT_FIELDS:
        if key in step and not isinstance(step[key], dict):
            errors.append({"field": f"{at}.{key}", "error": "must be an object"})
    deps = step.get("dependsOn")
    if deps is not None and not (isinstance(deps, list) and all(isinstance(d, str) for d in deps)):
        errors.append({"field": f"{at}.dependsOn", "error": "must be a list of step ids"})
    ref = step.get("promptTemplate")
    if ref is not None and not isinstance(ref, str | dict):
        errors.append({"field": f"{at}.promptTemplate", "error": "must be a name or {name, version}"})
    for key in ("assignTo", "reassignTo"):
        if step.get(key) is not None and not isinstance(step[key], str):
            errors.append({"field": f"{at}.{key}", "error": "must be a user id (uuid)"})
    outcomes = step.get("outcomes")
    if outcomes is not None and not (
        isinstance(outcomes, list) and all(isinstance(o, str) for o in outcomes)
    ):
        errors.append({"field": f"{at}.outcomes", "error": "must be a list of strings"})
    sla = step.get("slaHours")
    if sla is not None and (isinstance(sla, bool) or not isinstance(sla, int | float)):
        errors.append({"field": f"{at}.slaHours", "error": "must be a number"})
    routes = step.get("routes")
    if isinstance(routes, dict) and not all(isinstance(v, str) for v in routes.values()):
        errors.append({"field": f"{at}.routes", "error": "must map outcomes to step ids"})
    return errors


def steps_of(definition: dict[str, Any]) -> list[dict[str, Any]]:
    """The steps with `dependsOn` filled in (default: the previous step)."""
    steps = [dict(step) for step in definition.get("steps") or [] if isinstance(step, dict)]
    for index, step in enumerate(steps):
        if step.get("dependsOn") is None:
            previous = steps[index - 1].get("id") if index else None
            step["dependsOn"] = [previous] if previous else []
        step.setdefault("name", step.get("id"))
    return steps


def step_definition(case: Case, step_id: str) -> dict[str, Any]:
    """The step `step_id` of the workflow version the case is bound to (defaults filled in), or {}."""
    if case.workflow_version is None:
        return {}
    for step in steps_of(case.workflow_version.definition):
        if step["id"] == step_id:
            return step
    return {}


def prompt_reference(step: dict[str, Any]) -> tuple[str | None, int | None]:
    """An agent step's `promptTemplate`: a name (latest version) or {name, version}."""
    ref = step.get("promptTemplate")
    if isinstance(ref, str):
        return ref, None
    if isinstance(ref, dict):
        return ref.get("name"), ref.get("version")
    return None, None


def check_json_schema(schema: Any, field: str) -> list[dict[str, str]]:
    if not isinstance(schema, dict):
        return [{"field": field, "error": "must be a JSON Schema object"}]
    try:
        Draft7Validator.check_schema(schema)
    except SchemaError as exc:
        return [{"field": field, "error": f"is not a valid draft-07 schema: {exc.message}"}]
    return []


def _check_step(index: int, step: dict[str, Any], tenant_id: Any) -> list[dict[str, str]]:
    at = f"steps[{index}]"
    errors: list[dict[str, str]] = []
    if not isinstance(step.get("id"), str) or not STEP_ID_RE.match(step["id"]):
        errors.append(
            {"field": f"{at}.id", "error": "must be a letter followed by up to 99 of A-Z a-z 0-9 _ -"}
        )
    if not isinstance(step.get("name"), str) or not step["name"].strip():
        errors.append({"field": f"{at}.name", "error": "must be a non-empty string"})
    deps = step.get("dependsOn")
    if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
        errors.append({"field": f"{at}.dependsOn", "error": "must be a list of step ids"})
    condition = step.get("condition")
    if condition is not None:
        if not isinstance(condition, str) or not condition.strip():
            errors.append({"field": f"{at}.condition", "error": "must be a non-empty template expression"})
        else:
            try:
                check_template(condition_source(condition))
            except TemplateError as exc:
                errors.append({"field": f"{at}.condition", "error": f"does not parse: {exc}"})
    step_type = step.get("type")
    handler = step_types.REGISTRY.get(step_type) if isinstance(step_type, str) else None
    if handler is None:
        known = ", ".join(sorted(step_types.REGISTRY))
        errors.append({"field": f"{at}.type", "error": f"must be one of: {known}"})
    else:
        errors += handler.check(step, field=at, tenant_id=tenant_id)
    return errors


def _graph_errors(steps: list[dict[str, Any]]) -> list[dict[str, str]]:
    errors: list[dict[str, str]] = []
    ids = [s.get("id") for s in steps]
    seen: set[Any] = set()
    for index, step_id in enumerate(ids):
        if step_id in seen:
            errors.append({"field": f"steps[{index}].id", "error": f"duplicate step id {step_id!r}"})
        seen.add(step_id)
    for index, step in enumerate(steps):
        for dep in step.get("dependsOn") or []:
            if dep not in seen:
                errors.append({"field": f"steps[{index}].dependsOn", "error": f"unknown step {dep!r}"})
            elif dep == step.get("id"):
                errors.append(
                    {"field": f"steps[{index}].dependsOn", "error": "a step cannot depend on itself"}
                )
    if not errors:
        errors += _route_errors(steps)
    if not errors:
        cycle = _find_cycle(steps)
        if cycle:
            errors.append({"field": "steps", "error": f"dependency cycle: {' -> '.join(cycle)}"})
    return errors


def _route_errors(steps: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Rework routes (`routes: {outcome: step id}`) on `task` steps only, from one of the step's
    `outcomes` back to a step strictly before it in the definition: a route forward or to an
    unknown step could never be the "go back and redo" it stands for."""
    errors: list[dict[str, str]] = []
    position = {step.get("id"): index for index, step in enumerate(steps)}
    for index, step in enumerate(steps):
        routes = step.get("routes")
        if routes is None:
            continue
        at = f"steps[{index}].routes"
        if step.get("type") != "task":
            errors.append({"field": at, "error": "only task steps take routes"})
            continue
        outcomes = step.get("outcomes") or []
        for outcome, target in routes.items():
            if outcome not in outcomes:
                errors.append({"field": f"{at}.{outcome}", "error": "is not one of the step's outcomes"})
            elif target not in position:
                errors.append({"field": f"{at}.{outcome}", "error": f"unknown step {target!r}"})
            elif position[target] >= index:
                errors.append(
                    {"field": f"{at}.{outcome}", "error": f"step {target!r} is not before this step"}
                )
    return errors


def _find_cycle(steps: list[dict[str, Any]]) -> list[str] | None:
    deps = {s["id"]: list(s.get("dependsOn") or []) for s in steps}
    state: dict[str, int] = {}  # 1 visiting, 2 done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for dep in deps.get(node, []):
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep] if dep in path else [node, dep]
            if state.get(dep) is None:
                found = visit(dep, [*path, dep])
                if found:
                    return found
        state[node] = 2
        return None

    for node in deps:
        if state.get(node) is None:
            found = visit(node, [node])
            if found:
                return found
    return None


def publish_errors(definition: dict[str, Any], *, tenant_id: Any) -> list[dict[str, str]]:
    """Every problem that keeps a draft from being published, as [{field, error}]."""
    raw = definition.get("steps")
    if not isinstance(raw, list) or not raw:
        return [{"field": "steps", "error": "a workflow needs at least one step"}]
    # Drafts stored before the save-time shape check (or written by other code) are re-checked
    # here; later checks assume these types.
    errors = step_shape_errors(raw)
    if errors:
        return errors
    steps = steps_of(definition)
    for index, step in enumerate(steps):
        errors += _check_step(index, step, tenant_id)
    if not errors:
        errors += _graph_errors(steps)
    outcomes = definition.get("outcomes")
    if outcomes is not None and not (
        isinstance(outcomes, list) and all(isinstance(o, str) and o for o in outcomes)
    ):
        errors.append({"field": "outcomes", "error": "must be a list of non-empty strings"})
    return errors
