"""Workflow definitions: normalizing a posted definition and the checks publishing runs."""

from __future__ import annotations

import re
from typing import Any

from jsonschema import Draft7Validator
from jsonschema.exceptions import SchemaError

from casemgmt.templating import TemplateError, check_template
from casemgmt.templating.renderer import condition_source
from casemgmt.workflows import steps as step_types

STEP_ID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,99}$")


def steps_of(definition: dict[str, Any]) -> list[dict[str, Any]]:
    """The steps with `dependsOn` filled in (CONTRACT: default is the previous step)."""
    steps = [dict(step) for step in definition.get("steps") or [] if isinstance(step, dict)]
    for index, step in enumerate(steps):
        if step.get("dependsOn") is None:
            previous = steps[index - 1].get("id") if index else None
            step["dependsOn"] = [previous] if previous else []
        step.setdefault("name", step.get("id"))
    return steps


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
    handler = step_types.REGISTRY.get(step.get("type"))  # type: ignore[arg-type]
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
        cycle = _find_cycle(steps)
        if cycle:
            errors.append({"field": "steps", "error": f"dependency cycle: {' -> '.join(cycle)}"})
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
    errors = [
        {"field": f"steps[{i}]", "error": "must be an object"}
        for i, step in enumerate(raw)
        if not isinstance(step, dict)
    ]
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
