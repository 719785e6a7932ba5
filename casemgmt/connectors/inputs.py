"""Turning an action's configured inputs into the values a connector receives: template expressions
rendered through the one renderer the workflows use, then checked against the declared inputs."""

from __future__ import annotations

from typing import Any

from casemgmt.connectors.base import Action, Connector, Input
from casemgmt.templating import TemplateError, check_template, render

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


class InputProblems(Exception):
    def __init__(self, errors: list[dict[str, str]]) -> None:
        super().__init__(errors[0]["error"] if errors else "invalid inputs")
        self.errors = errors


def render_value(value: Any, context: dict[str, Any], path: str = "") -> Any:
    """Renders every string inside `value` (dict values, list items) as a template."""
    if isinstance(value, str):
        if "{{" not in value:
            return value
        try:
            return render(value, context)
        except TemplateError as exc:
            raise InputProblems([{"field": path or "config", "error": f"template error: {exc}"}]) from exc
    if isinstance(value, dict):
        return {k: render_value(v, context, f"{path}.{k}" if path else str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [render_value(v, context, f"{path}[{i}]") for i, v in enumerate(value)]
    return value


def template_problems(value: Any, path: str) -> list[dict[str, str]]:
    """Templates in `value` that do not parse (checked when a workflow is published)."""
    if isinstance(value, str):
        try:
            check_template(value)
        except TemplateError as exc:
            return [{"field": path, "error": f"template error: {exc}"}]
        return []
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in template_problems(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in template_problems(v, f"{path}[{i}]")]
    return []


def _coerce(spec: Input, value: Any) -> Any:
    """Rendered templates are text: a number or boolean input given as an expression arrives as
    "12" or "true" and is read back as its type."""
    if not isinstance(value, str) or spec.type in ("string", "any"):
        return value
    text = value.strip()
    if spec.type == "boolean" and text in ("true", "false"):
        return text == "true"
    if spec.type in ("number", "integer"):
        try:
            return int(text) if spec.type == "integer" else float(text)
        except ValueError:
            return value
    return value


def type_problem(spec: Input, value: Any) -> str | None:
    if spec.type == "any" or value is None:
        return None
    expected = _JSON_TYPES[spec.type]
    if isinstance(value, bool) and bool not in expected:
        return f"must be of type {spec.type}"
    if not isinstance(value, expected):
        return f"must be of type {spec.type}"
    if spec.enum is not None and value not in spec.enum:
        return f"must be one of: {', '.join(spec.enum)}"
    return None


def check_inputs(connector: Connector, action: Action, inputs: dict[str, Any]) -> dict[str, Any]:
    """Declared inputs with defaults filled in and types read back; raises InputProblems."""
    errors = [
        {"field": name, "error": "is not an input of this action"}
        for name in inputs
        if name not in action.inputs
    ]
    checked: dict[str, Any] = {}
    for name, spec in action.inputs.items():
        value = _coerce(spec, inputs.get(name, spec.default))
        if value is None or value == "":
            if spec.required:
                errors.append({"field": name, "error": "is required"})
            elif value == "" and name in inputs and spec.type in ("string", "any"):
                # A text input whose template renders empty (an `{{#unless}}` that is false) is
                # still given: the call gets the empty string, and a dry run shows the key.
                checked[name] = ""
            continue
        if problem := type_problem(spec, value):
            errors.append({"field": name, "error": problem})
        checked[name] = value
    if not errors:
        errors = connector.check_inputs(action.name, checked)
    if errors:
        raise InputProblems(errors)
    return checked


def prepared_inputs(
    connector: Connector, action: Action, raw: dict[str, Any], context: dict[str, Any]
) -> dict[str, Any]:
    """Render, check, then let the connector add what it derives from the case."""
    checked = check_inputs(connector, action, render_value(raw, context))
    return connector.prepare(action.name, checked, context)
