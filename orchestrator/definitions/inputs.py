"""Input fields of the orchestrator's definition and scheduling bodies.

Each field reads its value as these bodies always have: null and absent mean "not set", a number
in a string map is kept as its text, and a problem is reported in the body's own words ("must be a
string"). They subclass the DRF field that documents them, so the OpenAPI body is generated from
the same serializer that reads it; the documented shape may be narrower than what is accepted.
Every problem of a body leaves in one 400 (one `{field, error}` per problem, nested keys as
`parameters.NAME` and list items as `tasks[0]`)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.fields import empty

from orchestrator.definitions import environment
from shared.api.problems import Problems, require_object


def _missing(data: Any) -> bool:
    return data is empty or data is None


class ObjectBodySerializer(serializers.Serializer):
    # A body that is not a JSON object is one 400 before any field is read. (A comment, not a
    # docstring: drf-spectacular would document it on every body.)

    def run_validation(self, data: Any = empty) -> Any:
        require_object(data)
        return super().run_validation(data)


class TextField(serializers.CharField):
    """A string; null, absent (and "" unless `required`) are `unset`. The DRF arguments
    (allow_null, allow_blank...) only shape the documentation."""

    default_error_messages = {"invalid": "must be a string", "blank": "must not be blank"}

    def __init__(self, *, unset: Any = "", **kwargs: Any) -> None:
        self.unset = unset
        super().__init__(**kwargs)

    def run_validation(self, data: Any = empty) -> Any:
        if _missing(data):
            if self.required:
                self.fail("required")
            return self.unset
        if not isinstance(data, str):
            self.fail("invalid")
        if self.required and not data.strip():
            self.fail("blank")
        return data or self.unset


class TextListField(serializers.ListField):
    """An array of strings; null or absent is []."""

    default_error_messages = {"invalid": "must be an array of strings"}

    def run_validation(self, data: Any = empty) -> list[str]:
        if _missing(data):
            return []
        if not isinstance(data, list) or not all(isinstance(v, str) for v in data):
            self.fail("invalid")
        return data


class PlainMapField(serializers.DictField):
    """An object whose values are checked later (by whoever uses them); null or absent is {}."""

    default_error_messages = {"invalid": "must be an object of string values"}

    def run_validation(self, data: Any = empty) -> dict[str, Any]:
        if _missing(data):
            return {}
        if not isinstance(data, dict):
            self.fail("invalid")
        return data


class _EnvironmentMap:
    """Environment names to string values (numbers kept as their text), each entry checked by
    `environment.check_entry`. `qualified`: keys may also be `<task_id>.<NAME>` (NAME is checked)."""

    qualified = False

    def run_validation(self, data: Any = empty) -> dict[str, str]:
        if _missing(data):
            return {}
        if not isinstance(data, dict):
            raise serializers.ValidationError("must be an object of string values")
        return environment_map(data, qualified=self.qualified)


def environment_map(data: dict[str, Any], *, qualified: bool) -> dict[str, str]:
    values: dict[str, str] = {}
    problems: dict[str, str] = {}
    for key, item in data.items():
        name = str(key).rpartition(".")[2] if qualified else key
        entry = Problems()
        text = environment.check_entry(entry, name, item, key)
        if text is None:
            problems[key] = entry.errors[0]["error"]
        else:
            values[key] = text
    if problems:
        raise serializers.ValidationError(problems)
    return values


@extend_schema_field(
    {
        "type": "object",
        "nullable": True,
        "additionalProperties": {"oneOf": [{"type": "string"}, {"type": "number"}]},
        "description": "String values; numbers are kept as their text; null is {}.",
    }
)
class EnvironmentMapField(_EnvironmentMap, serializers.DictField):
    def __init__(self, *, qualified: bool = False, **kwargs: Any) -> None:
        self.qualified = qualified
        super().__init__(**kwargs)


class EnvironmentVariablesField(_EnvironmentMap, serializers.DictField):
    """A schedule's `env_vars`, documented as an object of strings."""


class AllowedEnvField(serializers.ListField):
    """A task's `allowed_env`: null (not declared) or a list of names that may be set; sorted and
    without repeats so that an equal list is an unchanged definition."""

    def run_validation(self, data: Any = empty) -> list[str] | None:
        if _missing(data):
            return None
        if not isinstance(data, list):
            raise serializers.ValidationError("must be an array of environment names or null")
        problems = [environment.name_problem(name) for name in data]
        if any(problems):
            raise serializers.ValidationError([[p] if p else {} for p in problems])
        return sorted(set(data))


class BoundedIntegerField(serializers.IntegerField):
    """An integer from `min_value` to `max_value` (a boolean is not one), else `message`; absent
    (and null, when `null_is_unset`) is `unset`, or `message` too when the field is required."""

    def __init__(self, *, message: str, unset: Any = None, null_is_unset: bool = True, **kwargs: Any) -> None:
        self.message, self.unset, self.null_is_unset = message, unset, null_is_unset
        super().__init__(**kwargs)

    def run_validation(self, data: Any = empty) -> Any:
        unset = data is empty or (data is None and self.null_is_unset)
        if unset and not self.required:
            return self.unset
        low, high = self.min_value, self.max_value
        if isinstance(data, bool) or not isinstance(data, int):
            raise serializers.ValidationError(self.message)
        if (low is not None and data < low) or (high is not None and data > high):
            raise serializers.ValidationError(self.message)
        return data


class DagTaskListSerializer(serializers.ListSerializer):
    """A DAG's tasks: each a task id or `{id, parameters}`; both become `{id, parameters}`."""

    def run_validation(self, data: Any = empty) -> list[dict[str, Any]]:
        if _missing(data):
            raise serializers.ValidationError("This field is required.")
        if not isinstance(data, list) or not data:
            raise serializers.ValidationError("must be a non-empty array")
        entries, problems = [], []
        for item in data:
            entry, problem = _dag_task(item)
            problems.append(problem)
            if entry is not None:
                entries.append(entry)
        if any(problems):
            raise serializers.ValidationError(problems)
        return entries


def _dag_task(item: Any) -> tuple[dict[str, Any] | None, Any]:
    """The entry, or None with what is wrong with it ({} when nothing is)."""
    if isinstance(item, str):
        item = {"id": item}
    if not isinstance(item, dict) or not isinstance(item.get("id"), str):
        return None, ["must be a task id or an object with id and parameters"]
    raw = item.get("parameters")
    if raw is None:
        return {"id": item["id"], "parameters": {}}, {}
    if not isinstance(raw, dict):
        return None, {"parameters": ["must be an object of string values"]}
    try:
        return {"id": item["id"], "parameters": environment_map(raw, qualified=False)}, {}
    except serializers.ValidationError as exc:
        return None, {"parameters": exc.detail}
