"""OpenAPI shapes of the definitions endpoints (documentation only: bodies are read by each
view's InputSerializer, which lists every problem in one 400)."""

from rest_framework import serializers

StringMap = serializers.DictField(child=serializers.CharField(), required=False)


class TaskIn(serializers.Serializer):
    name = serializers.CharField(required=False)
    description = serializers.CharField(required=False)
    command = serializers.CharField(help_text="May contain ${NAME} references (substituted shell-quoted).")
    dependencies = serializers.ListField(child=serializers.CharField(), required=False)
    parameters = serializers.DictField(child=serializers.CharField(), required=False)
    queue = serializers.CharField(required=False)


class TaskOut(TaskIn):
    id = serializers.CharField()
    created_at = serializers.DateTimeField(required=False, help_text="Single read only.")
    updated_at = serializers.DateTimeField(required=False, help_text="Single read only.")


class TaskList(serializers.Serializer):
    tasks = TaskOut(many=True)
    total = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()


class DagTask(serializers.Serializer):
    id = serializers.CharField()
    parameters = serializers.DictField(child=serializers.CharField(), required=False)


class DagIn(serializers.Serializer):
    name = serializers.CharField(required=False)
    description = serializers.CharField(required=False)
    tasks = DagTask(many=True)
    context = serializers.CharField(required=False, allow_null=True)
    tags = serializers.ListField(child=serializers.CharField(), required=False)


class DagOut(DagIn):
    id = serializers.CharField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class DagListItem(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    tasks = serializers.ListField(child=serializers.CharField())
    context = serializers.CharField(allow_null=True)
    tags = serializers.ListField(child=serializers.CharField())


class DagList(serializers.Serializer):
    dags = DagListItem(many=True)
    total = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()


class ContextIn(serializers.Serializer):
    variables = serializers.DictField(child=serializers.CharField(), required=False)
    extends = serializers.CharField(required=False, allow_null=True)


class ContextOut(ContextIn):
    id = serializers.CharField()
    created_at = serializers.DateTimeField(required=False)
    updated_at = serializers.DateTimeField(required=False)


class ContextList(serializers.Serializer):
    contexts = ContextOut(many=True)
    total = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()


class ParameterSetIn(serializers.Serializer):
    parameters = serializers.DictField(child=serializers.CharField(), required=False)


class ParameterSetOut(ParameterSetIn):
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
