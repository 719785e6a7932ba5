"""Input serializers and fields of the scheduling and rerun bodies. Each field reads its value as
these bodies always have (null and absent are "not set") and reports a problem in the body's own
words; every problem leaves in one 400, except a missing or malformed target id, reported alone."""

from __future__ import annotations

import re
from dataclasses import fields
from typing import Any

from rest_framework import serializers
from rest_framework.fields import empty

from orchestrator.definitions.inputs import (
    BoundedIntegerField,
    EnvironmentVariablesField,
    ObjectBodySerializer,
    PlainMapField,
    TextField,
)
from orchestrator.definitions.openapi import IdField
from orchestrator.definitions.validation import ID_RE
from orchestrator.runs import openapi
from orchestrator.runs.planning import ScheduleOptions
from shared.api import errors

RUN_ID_RE = re.compile(openapi.RUN_ID_PATTERN)
MAX_TIMEOUT = openapi.MAX_TIMEOUT
MAX_RETRIES = openapi.MAX_RETRIES
MAX_RETRY_DELAY = openapi.MAX_RETRY_DELAY
MAX_PRIORITY = openapi.MAX_PRIORITY


class FlagField(serializers.BooleanField):
    """true or false; absent is false (null is not a boolean)."""

    def run_validation(self, data: Any = empty) -> bool:
        if data is empty:
            return False
        if not isinstance(data, bool):
            raise serializers.ValidationError("must be a boolean")
        return data


class LenientBooleanField(serializers.BooleanField):
    """Anything but true is false: the cancel body has always been read so, and stays so."""

    def run_validation(self, data: Any = empty) -> bool:
        return data is True


class FromTaskField(serializers.CharField):
    def run_validation(self, data: Any = empty) -> str | None:
        if data is empty or data is None:
            return None
        if not isinstance(data, str):
            raise serializers.ValidationError("must be a task id")
        return data


class RunIdInputField(openapi.RunIdField):
    def run_validation(self, data: Any = empty) -> str | None:
        if data is empty or data is None:
            return None
        if not isinstance(data, str) or not RUN_ID_RE.match(data):
            raise serializers.ValidationError(
                "must be 1-128 characters of letters, digits, '_', '.', ':', '-'"
            )
        return data


class TargetIdField(IdField):
    """The target's id, checked (alone) before the body is read, so it is taken as it came."""

    def run_validation(self, data: Any = empty) -> Any:
        return data


def _bounded(name: str, *, minimum: int, maximum: int, **kwargs: Any) -> BoundedIntegerField:
    kind = "a positive integer" if minimum == 1 else "a non-negative integer"
    return BoundedIntegerField(
        message=f"{name} must be {kind} (at most {maximum})",
        required=False,
        min_value=minimum,
        max_value=maximum,
        **kwargs,
    )


class ScheduleOptionsSerializer(ObjectBodySerializer):
    # The body fields schedule-task and schedule-dag share, read into `ScheduleOptions` (the
    # console's schedule form is read by it too). The target's id is checked first and reported
    # alone: without it the rest of the body means nothing. (Comments: a docstring would be
    # documented on both bodies.)

    target_id = ""  # "task_id" or "dag_id"
    parameters_help = ""
    run_id = RunIdInputField(required=False, help_text="Duplicate: 409 already_exists.")
    context = TextField(unset=None, required=False, allow_null=True, help_text="Context id.")
    env_vars = EnvironmentVariablesField(
        child=serializers.CharField(),
        required=False,
        help_text=(
            "Environment variables of every task of the run. Names that change how a shell, the "
            "loader or an interpreter starts (PATH, HOME, BASH_ENV, ENV, LD_*, PYTHON*, ...) and "
            "names a task's allowed_env does not list: 400."
        ),
    )
    parameters = PlainMapField(child=serializers.CharField(), required=False)
    timeout_seconds = _bounded("timeout_seconds", minimum=1, maximum=MAX_TIMEOUT)
    retries = _bounded("retries", minimum=0, maximum=MAX_RETRIES, unset=0)
    retry_delay_seconds = _bounded("retry_delay_seconds", minimum=0, maximum=MAX_RETRY_DELAY, unset=0)
    parameter_set = TextField(unset=None, required=False, help_text="Parameter set id (extension).")
    priority = BoundedIntegerField(
        message=f"priority must be an integer from -{MAX_PRIORITY} to {MAX_PRIORITY}",
        required=False,
        unset=0,
        null_is_unset=False,
        default=0,
        min_value=-MAX_PRIORITY,
        max_value=MAX_PRIORITY,
        help_text="Higher is claimed first within a queue (default 0).",
    )

    def get_fields(self) -> dict[str, serializers.Field]:
        found = super().get_fields()
        found["parameters"].help_text = self.parameters_help or None
        return found

    def to_internal_value(self, data: dict[str, Any]) -> dict[str, Any]:
        if self.target_id:
            _required_id(data, self.target_id, task=self.target_id == "task_id")
        return super().to_internal_value(data)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        option_names = {f.name for f in fields(ScheduleOptions)}
        options = ScheduleOptions(**{k: v for k, v in attrs.items() if k in option_names})
        return {**{k: v for k, v in attrs.items() if k not in option_names}, "options": options}


def _required_id(body: dict, field: str, *, task: bool) -> str:
    """A missing or malformed id is reported alone, before the other fields are read."""
    value = body.get(field)
    if not isinstance(value, str) or not (ID_RE.match(value) if task else value):
        message = f"{field} is required and must be a task id" if task else f"{field} is required"
        raise errors.ValidationFailed(message, field=field)
    return value
