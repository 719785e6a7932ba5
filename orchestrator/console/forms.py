"""The schedule form: which fields it shows, and the API body it turns into.

Declared parameters are one input each, empty with the default as a hint; only filled-in inputs are
sent, so a chosen parameter set is not overridden by defaults the user never touched. The body is
then read by the same `ScheduleOptionsSerializer` the API uses, so the form and the API accept the same values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import QueryDict
from django.utils.translation import gettext as _

from orchestrator.definitions.models import TaskDefinition


@dataclass
class ParameterField:
    key: str  # what the API's `parameters` takes: NAME (schedule-task) or <task>.NAME (schedule-dag)
    default: str
    value: str = ""
    error: str = ""

    @property
    def input_id(self) -> str:
        return "p-" + self.key.replace(".", "-")


def parameter_fields(definitions: list[TaskDefinition], *, qualified: bool) -> list[ParameterField]:
    fields = []
    for task in definitions:
        for name, default in sorted(task.parameters.items()):
            key = f"{task.id}.{name}" if qualified else name
            fields.append(ParameterField(key=key, default=str(default)))
    return fields


def extra_parameters(
    raw: str, errors: list[dict[str, str]], field: str = "extra_parameters"
) -> dict[str, str]:
    """`KEY=value` lines (parameters the definitions do not declare; a schedule's parameters)."""
    found: dict[str, str] = {}
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            errors.append({"field": field, "error": _("line %(n)d must be KEY=value") % {"n": number}})
            continue
        found[key.strip()] = value.strip()
    return found


def _integer(raw: str, name: str, errors: list[dict[str, str]]) -> int | None:
    if not raw.strip():
        return None
    try:
        return int(raw)
    except ValueError:
        errors.append({"field": name, "error": f"{name} must be an integer"})
        return None


def schedule_body(
    post: QueryDict, fields: list[ParameterField]
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The API body for the submitted form, and the problems only the form can have (a line that
    is not KEY=value, a number that is not a number)."""
    problems: list[dict[str, str]] = []
    parameters: dict[str, str] = {}
    for f in fields:
        f.value = str(post.get(f.input_id, ""))
        if f.value != "":
            parameters[f.key] = f.value
    parameters.update(extra_parameters(str(post.get("extra_parameters", "")), problems))
    body: dict[str, Any] = {"parameters": parameters}
    for name in ("run_id", "context", "parameter_set", "queue"):
        text = str(post.get(name, "")).strip()
        if text:
            body[name] = text
    for name in ("priority", "timeout_seconds", "retries"):
        number = _integer(str(post.get(name, "")), name, problems)
        if number is not None:
            body[name] = number
    return body, problems


def attach_errors(fields: list[ParameterField], errors: list[dict[str, str]]) -> dict[str, str]:
    """Puts each `parameters.<key>` message on its input; returns the other messages by field."""
    by_key = {f.key: f for f in fields}
    rest: dict[str, str] = {}
    for item in errors:
        name = item.get("field") or ""
        key = name.removeprefix("parameters.")
        if name.startswith("parameters.") and key in by_key:
            by_key[key].error = item["error"]
        else:
            rest[name or "form"] = (rest.get(name or "form", "") + " " + item["error"]).strip()
    return rest
