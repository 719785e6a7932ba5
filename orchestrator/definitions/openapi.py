"""OpenAPI shapes of the definitions endpoints' responses (documentation only: bodies are read and
documented by each view's InputSerializer)."""

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from orchestrator.definitions.validation import ID_RE

# A task, DAG or context id (definitions/validation.py); other values are a 400.
Id = {"type": "string", "pattern": ID_RE.pattern}

StringMap = serializers.DictField(child=serializers.CharField(), required=False)


@extend_schema_field(Id)
class IdField(serializers.CharField):
    pass


@extend_schema_field(
    {
        "type": "object",
        "nullable": True,
        "additionalProperties": {"oneOf": [{"type": "string"}, {"type": "number"}]},
        "description": "String values; numbers are kept as their text; null is {}.",
    }
)
class StringMapField(serializers.DictField):
    pass


def optional_text(**kwargs: Any) -> serializers.CharField:
    """An optional string where null and "" both mean "not set"."""
    return serializers.CharField(required=False, allow_null=True, allow_blank=True, **kwargs)


class TaskOut(serializers.Serializer):
    name = optional_text()
    description = optional_text()
    command = serializers.CharField(help_text="May contain ${NAME} references (substituted shell-quoted).")
    dependencies = serializers.ListField(child=IdField(), required=False, allow_null=True)
    parameters = StringMapField(required=False)
    allowed_env = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        allow_null=True,
        help_text=(
            "Environment names that schedule-task/schedule-dag env_vars and parameters may set for "
            "this task (others: 400). Null or absent: not declared, any name but the refused ones."
        ),
    )
    queue = optional_text(help_text="Empty: the default queue.")
    pool = serializers.CharField(
        required=False, allow_null=True, allow_blank=True, help_text="A pool's name (unknown: 400)."
    )
    id = serializers.CharField()
    version = serializers.IntegerField(help_text="+1 on each PUT that changes the task.")
    created_at = serializers.DateTimeField(required=False, help_text="Single read only.")
    updated_at = serializers.DateTimeField(required=False, help_text="Single read only.")


class TaskList(serializers.Serializer):
    tasks = TaskOut(many=True)
    total = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()


class DagTask(serializers.Serializer):
    id = IdField()
    parameters = StringMapField(required=False)


class DagOut(serializers.Serializer):
    name = serializers.CharField(required=False)
    description = serializers.CharField(required=False)
    tasks = DagTask(many=True, allow_empty=False)
    context = serializers.CharField(required=False, allow_null=True)  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class
    tags = serializers.ListField(child=serializers.CharField(), required=False)
    max_active_runs = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, help_text="Further runs wait pending (null: no limit)."
    )
    id = serializers.CharField()
    version = serializers.IntegerField(help_text="+1 on each PUT that changes the DAG.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class DagListItem(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    tasks = serializers.ListField(child=serializers.CharField())
    context = serializers.CharField(allow_null=True)  # type: ignore[assignment]  # a declared field: DRF's metaclass pops it from the class
    tags = serializers.ListField(child=serializers.CharField())
    max_active_runs = serializers.IntegerField(allow_null=True)
    version = serializers.IntegerField()


class DagList(serializers.Serializer):
    dags = DagListItem(many=True)
    total = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()


class ContextOut(serializers.Serializer):
    variables = StringMapField(required=False)
    extends = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    id = serializers.CharField()
    created_at = serializers.DateTimeField(required=False)
    updated_at = serializers.DateTimeField(required=False)


class ContextList(serializers.Serializer):
    contexts = ContextOut(many=True)
    total = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()


class ParameterSetOut(serializers.Serializer):
    parameters = StringMapField(required=False)
    id = serializers.CharField()
    created_at = serializers.DateTimeField(required=False)
    updated_at = serializers.DateTimeField(required=False)


class ParameterSetList(serializers.Serializer):
    parameter_sets = ParameterSetOut(many=True)
    total = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()


class Deleted(serializers.Serializer):
    success = serializers.BooleanField()
    message = serializers.CharField()
